export interface ReceivedEvent {
  stream: string;
  seq: number;
  subject: string;
  /** The CloudEvent as published; anything that does not parse as JSON is kept as text. */
  event: unknown;
}

export function formatJson(received: ReceivedEvent): string {
  return JSON.stringify(received);
}

const colors = { dim: "\x1b[2m", cyan: "\x1b[36m", yellow: "\x1b[33m", reset: "\x1b[0m" };

/** One header line (time, subject, source, id) and the payload's fields indented beneath it. */
export function formatPretty(received: ReceivedEvent, color = false): string {
  const c = (code: keyof typeof colors, text: string) =>
    color ? `${colors[code]}${text}${colors.reset}` : text;
  const event = received.event as { time?: string; source?: string; id?: string; data?: unknown } | string;
  if (typeof event !== "object" || event === null) {
    return `${c("cyan", received.subject)} ${c("dim", `#${received.seq}`)} (not JSON) ${String(event)}`;
  }
  const header = [
    c("dim", event.time ?? "-"),
    c("cyan", received.subject),
    c("yellow", event.source ?? "-"),
    c("dim", `${received.stream}#${received.seq} ${event.id ?? ""}`.trim()),
  ].join("  ");
  const data = event.data;
  if (data === null || typeof data !== "object") return `${header}\n    ${JSON.stringify(data)}`;
  const entries = Object.entries(data as Record<string, unknown>);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  const lines = entries.map(
    ([k, v]) => `    ${k.padEnd(width)}  ${typeof v === "string" ? v : JSON.stringify(v)}`,
  );
  return [header, ...lines].join("\n");
}
