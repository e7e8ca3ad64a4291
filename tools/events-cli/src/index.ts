export { parseSince, parseTailArgs, type TailOptions } from "./args";
export { type DeadLettersOptions, deadLetters, parseDeadLettersArgs } from "./dead-letters";
export { formatJson, formatPretty, type ReceivedEvent } from "./format";
export { intersectSubjects, planConsumers } from "./subjects";
export { tail } from "./tail";
