export {
  type LogSink,
  REPO_ROOT,
  type ServiceProcess,
  startServiceProcess,
  waitUntilReady,
} from "./processes.ts";
export { dashboardExpressions, metricNames, withGrafanaVariables } from "./promql.ts";
export {
  DEFAULT_PORTS,
  randomPrefix,
  SERVICE_NAMES,
  type ServiceName,
  type Stack,
  type StackOptions,
  startStack,
} from "./stack.ts";
