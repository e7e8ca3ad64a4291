export { dashboardExpressions, metricNames, withGrafanaVariables } from "./promql.ts";
export {
  DEFAULT_PORTS,
  type LogSink,
  randomPrefix,
  SERVICE_NAMES,
  type ServiceName,
  type Stack,
  type StackOptions,
  startStack,
} from "./stack.ts";
