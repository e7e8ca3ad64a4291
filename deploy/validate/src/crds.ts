/**
 * Minimal structural schemas for the custom resources we use (CloudNativePG), since their CRDs are not in the
 * Kubernetes schemas: the fields we set, their types, and no unknown top-level spec field.
 */
const secretRef = {
  type: "object",
  required: ["name"],
  properties: { name: { type: "string", minLength: 1 } },
  additionalProperties: false,
};
const keyRef = {
  type: "object",
  required: ["name", "key"],
  properties: { name: { type: "string", minLength: 1 }, key: { type: "string", minLength: 1 } },
  additionalProperties: false,
};
const quantity = {
  anyOf: [{ type: "string", pattern: "^[0-9.]+(m|k|Ki|M|Mi|G|Gi|T|Ti)?$" }, { type: "number" }],
};
const resources = {
  type: "object",
  properties: {
    requests: { type: "object", additionalProperties: quantity },
    limits: { type: "object", additionalProperties: quantity },
  },
  additionalProperties: false,
};
const metadata = {
  type: "object",
  required: ["name"],
  properties: { name: { type: "string", pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" } },
};

export const CRD_SCHEMAS: Record<string, object> = {
  "postgresql.cnpg.io/v1/Cluster": {
    type: "object",
    required: ["apiVersion", "kind", "metadata", "spec"],
    properties: {
      metadata,
      spec: {
        type: "object",
        required: ["instances", "storage"],
        additionalProperties: false,
        properties: {
          instances: { type: "integer", minimum: 1 },
          imageName: { type: "string" },
          primaryUpdateStrategy: { enum: ["unsupervised", "supervised"] },
          storage: {
            type: "object",
            required: ["size"],
            properties: { size: quantity, storageClass: { type: "string" } },
            additionalProperties: false,
          },
          walStorage: {
            type: "object",
            required: ["size"],
            properties: { size: quantity, storageClass: { type: "string" } },
            additionalProperties: false,
          },
          postgresql: {
            type: "object",
            properties: { parameters: { type: "object", additionalProperties: { type: "string" } } },
          },
          resources,
          affinity: {
            type: "object",
            additionalProperties: false,
            properties: {
              enablePodAntiAffinity: { type: "boolean" },
              topologyKey: { type: "string" },
              podAntiAffinityType: { enum: ["preferred", "required"] },
            },
          },
          monitoring: {
            type: "object",
            properties: { enablePodMonitor: { type: "boolean" } },
            additionalProperties: false,
          },
          bootstrap: {
            type: "object",
            additionalProperties: false,
            properties: {
              initdb: {
                type: "object",
                additionalProperties: false,
                properties: {
                  database: { type: "string" },
                  owner: { type: "string" },
                  secret: secretRef,
                  postInitApplicationSQL: { type: "array", items: { type: "string" } },
                },
              },
            },
          },
          managed: {
            type: "object",
            additionalProperties: false,
            properties: {
              roles: {
                type: "array",
                items: {
                  type: "object",
                  required: ["name"],
                  additionalProperties: false,
                  properties: {
                    name: { type: "string", pattern: "^[a-z_][a-z0-9_]*$" },
                    ensure: { enum: ["present", "absent"] },
                    login: { type: "boolean" },
                    connectionLimit: { type: "integer", minimum: -1 },
                    inRoles: { type: "array", items: { type: "string" } },
                    passwordSecret: secretRef,
                  },
                },
              },
            },
          },
          backup: {
            type: "object",
            additionalProperties: false,
            properties: {
              retentionPolicy: { type: "string", pattern: "^[1-9][0-9]*[dwm]$" },
              barmanObjectStore: {
                type: "object",
                required: ["destinationPath"],
                additionalProperties: false,
                properties: {
                  destinationPath: { type: "string", minLength: 1 },
                  endpointURL: { type: "string" },
                  s3Credentials: {
                    type: "object",
                    properties: { accessKeyId: keyRef, secretAccessKey: keyRef, region: keyRef },
                    additionalProperties: false,
                  },
                  wal: {
                    type: "object",
                    properties: {
                      compression: { enum: ["gzip", "bzip2", "snappy"] },
                      maxParallel: { type: "integer", minimum: 1 },
                    },
                    additionalProperties: false,
                  },
                  data: {
                    type: "object",
                    properties: {
                      compression: { enum: ["gzip", "bzip2", "snappy"] },
                      jobs: { type: "integer", minimum: 1 },
                    },
                    additionalProperties: false,
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  "postgresql.cnpg.io/v1/ScheduledBackup": {
    type: "object",
    required: ["apiVersion", "kind", "metadata", "spec"],
    properties: {
      metadata,
      spec: {
        type: "object",
        required: ["schedule", "cluster"],
        additionalProperties: false,
        properties: {
          // CloudNativePG's cron format has six fields, seconds first.
          schedule: { type: "string", pattern: "^\\S+( \\S+){5}$" },
          backupOwnerReference: { enum: ["none", "self", "cluster"] },
          immediate: { type: "boolean" },
          method: { enum: ["barmanObjectStore", "volumeSnapshot", "plugin"] },
          cluster: secretRef,
        },
      },
    },
  },
};
