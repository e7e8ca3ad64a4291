export { chunksByKey, type MicroBatcher, microBatcher } from "./micro-batch.ts";
