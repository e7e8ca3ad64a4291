export {
  type LogSink,
  REPO_ROOT,
  type ServiceProcess,
  startServiceProcess,
  waitUntilReady,
} from "./processes";
export { dashboardExpressions, metricNames, withGrafanaVariables } from "./promql";
export {
  DEFAULT_PORTS,
  randomPrefix,
  SERVICE_NAMES,
  type ServiceName,
  type Stack,
  type StackOptions,
  startStack,
} from "./stack";
