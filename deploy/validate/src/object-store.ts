import {
  BarmanObjectStoreConfiguration,
  type IBarmanObjectStoreConfiguration,
} from "@kubernetes-models/cloudnative-pg/github.com/cloudnative-pg/barman-cloud/pkg/api/BarmanObjectStoreConfiguration";
import type { ICluster } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster";
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import type { IResourceRequirements } from "kubernetes-models/v1/ResourceRequirements";

/**
 * The Barman Cloud plugin's ObjectStore (barmancloud.cnpg.io/v1). No npm package publishes a model of the plugin's
 * CRD, but its `spec.configuration` is the barman-cloud library's BarmanObjectStoreConfiguration, which
 * @kubernetes-models/cloudnative-pg does publish (from the operator's CRDs, where the in-tree barmanObjectStore used
 * it): that part is checked by its schema, the few fields around it here, after the plugin's CRD.
 */
export interface IObjectStore {
  apiVersion: "barmancloud.cnpg.io/v1";
  kind: "ObjectStore";
  metadata: ICluster["metadata"];
  spec: {
    configuration: IBarmanObjectStoreConfiguration;
    /** `<n>d`, `<n>w` or `<n>m`, as the CRD's pattern says. */
    retentionPolicy?: string;
    instanceSidecarConfiguration?: {
      env?: IEnvVar[];
      retentionPolicyIntervalSeconds?: number;
      resources?: IResourceRequirements;
    };
  };
}

interface SchemaError {
  instancePath: string;
  message: string;
  params?: Record<string, unknown>;
}

export class ObjectStore {
  private readonly data: IObjectStore;

  constructor(data: IObjectStore) {
    this.data = data;
  }

  validate(): void {
    const errors: SchemaError[] = [];
    const spec = this.data.spec as Partial<IObjectStore["spec"]> | undefined;
    if (!spec?.configuration)
      errors.push({ instancePath: "/spec", message: "must have property configuration" });
    else {
      try {
        new BarmanObjectStoreConfiguration(spec.configuration).validate();
      } catch (e) {
        for (const error of (e as { errors?: SchemaError[] }).errors ?? [])
          errors.push({ ...error, instancePath: `/spec/configuration${error.instancePath}` });
      }
    }
    if (spec?.retentionPolicy !== undefined && !/^[1-9][0-9]*[dwm]$/.test(spec.retentionPolicy))
      errors.push({ instancePath: "/spec/retentionPolicy", message: "must match ^[1-9][0-9]*[dwm]$" });
    if (errors.length > 0) throw Object.assign(new Error("ObjectStore is invalid"), { errors });
  }
}
