// Inside a JSON line: an escaped backslash (kept), or the escape of a control character that moves a terminal's
// cursor or starts an escape sequence once a reader (pino-pretty, jq -r, a terminal) turns it back into the byte.
// Line breaks and tabs stay readable.
const JSON_CONTROL_ESCAPE = /\\(\\|u00[01][0-9a-fA-F]|[bfr])/g;
// DEL and the C1 controls (0x9b starts an escape sequence on its own), which JSON leaves as they are.
const RAW_CONTROL = /[\u007f-\u009f]/g;
// An absolute URL: scheme, credentials, host and port, then path, query and fragment.
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s"\\/?#@]*@)?([^\s"\\/?#]+)([/?#][^\s"\\]*)?/gi;

/**
 * A pino JSON line made safe to write: control characters a client sent stay visible as escapes (`\u001b`) but
 * can no longer act on the terminal that shows the log, and URLs keep their scheme, host and port only, since RPC
 * providers put the API key in the path (and database URLs carry passwords).
 */
export function safeLogLine(line: string): string {
  return line
    .replace(JSON_CONTROL_ESCAPE, (match, body: string) => (body === "\\" ? match : `\\\\${body}`))
    .replace(RAW_CONTROL, (c) => `\\\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .replace(URL_IN_TEXT, (_url, scheme: string, host: string, rest: string | undefined) =>
      rest === undefined || rest === "/" ? `${scheme}${host}${rest ?? ""}` : `${scheme}${host}/<redacted>`,
    );
}
