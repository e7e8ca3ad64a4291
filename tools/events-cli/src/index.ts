export { parseSince, parseTailArgs, type TailOptions } from "./args.ts";
export { type DeadLettersOptions, deadLetters, parseDeadLettersArgs } from "./dead-letters.ts";
export { formatJson, formatPretty, type ReceivedEvent } from "./format.ts";
export { intersectSubjects, planConsumers } from "./subjects.ts";
export { tail } from "./tail.ts";
