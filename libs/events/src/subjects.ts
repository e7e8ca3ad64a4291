import { STREAMS, type StreamName } from "./catalog.ts";

/**
 * Names subjects and streams. Production uses an empty prefix (`chain.attestation_recorded` in stream `CHAIN`);
 * tests and parallel environments use their own prefix so they never share a stream.
 */
export interface Topology {
  prefix: string;
}

export const DEFAULT_TOPOLOGY: Topology = { prefix: "" };

export function streamName(topology: Topology, stream: StreamName): string {
  return topology.prefix ? `${topology.prefix.toUpperCase()}_${stream}` : stream;
}

export function subjectOf(topology: Topology, stream: StreamName, type: string): string {
  const base = `${STREAMS[stream].domain}.${type}`;
  return topology.prefix ? `${topology.prefix}.${base}` : base;
}

export function streamSubjects(topology: Topology, stream: StreamName): string {
  return subjectOf(topology, stream, ">");
}

/** The event type a subject carries (its last token). */
export function typeOfSubject(subject: string): string {
  return subject.slice(subject.lastIndexOf(".") + 1);
}

/**
 * Whether a NATS subject pattern matches a subject: `*` stands for one token, a trailing `>` for one token or more.
 */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (p[i] !== "*" && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}
