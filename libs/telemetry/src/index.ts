export { routeConsoleTo } from "./console";
export { createLogger, type Logger, type LoggerConfig } from "./logger";
export { startTelemetry, type Telemetry, type TelemetryOptions } from "./sdk";
