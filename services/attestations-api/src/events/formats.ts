import { FormatRegistry } from "@sinclair/typebox";

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * TypeBox checks `format` only for formats registered in its process-wide registry, and reports any other as an
 * error: without this, the catalog's `date-time` fields (uniqueness_verified.verifiedAt) make every such event fail
 * validation and be terminated. Registered once, here, until @humanpass/events does it itself.
 */
export function registerEventFormats(): void {
  if (!FormatRegistry.Has("date-time")) {
    FormatRegistry.Set("date-time", (value) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)));
  }
}
