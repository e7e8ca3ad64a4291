export {
  chunksByKey,
  type GroupWriter,
  groupWriter,
  type MicroBatcher,
  microBatcher,
} from "./micro-batch.ts";
