import type { Migration } from "@humanpass/db";
import { outbox } from "./0001_outbox.ts";
import { cursor } from "./0002_cursor.ts";

export const migrations: Record<string, Migration> = {
  "0001_outbox": outbox,
  "0002_cursor": cursor,
};
