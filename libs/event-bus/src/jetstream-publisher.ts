import {
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { inboxPrefixFor } from "./connection.ts";

export interface JetStreamMessage {
  subject: string;
  data: string;
  headers: MsgHdrs;
}

interface PendingBatch {
  subjects: string[];
  remaining: number;
  timer: NodeJS.Timeout;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Publishes batches to JetStream over a plain NATS connection: each message goes out with a reply subject under
 * one inbox subscription, and a batch resolves once every message has its PubAck. nats.js's `js.publish` builds
 * a request, a timer, two promises and an Error per message, which made it most of what an outbox relay spent.
 * Deduplication is the caller's, through the `Nats-Msg-Id` header.
 */
export class JetStreamBatchPublisher {
  private readonly inbox: string;
  private readonly subscription: Subscription;
  private readonly pending = new Map<number, PendingBatch>();
  private batches = 0;
  private closed = false;

  private readonly nc: NatsConnection;
  private readonly timeoutMs: number;

  /** `timeoutMs`: how long a batch may go without a PubAck before it fails. */
  constructor(nc: NatsConnection, timeoutMs: number) {
    this.nc = nc;
    this.timeoutMs = timeoutMs;
    this.inbox = createInbox(inboxPrefixFor(nc));
    this.subscription = nc.subscribe(`${this.inbox}.>`, {
      callback: (error, msg) => this.onReply(error, msg),
    });
  }

  publish(messages: JetStreamMessage[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error("publisher closed"));
    if (messages.length === 0) return Promise.resolve();
    const id = this.batches;
    this.batches += 1;
    return new Promise<void>((resolve, reject) => {
      const batch: PendingBatch = {
        subjects: messages.map((m) => m.subject),
        remaining: messages.length,
        timer: setTimeout(
          () => this.fail(id, new Error(`no PubAck from JetStream within ${this.timeoutMs} ms`)),
          this.timeoutMs,
        ),
        resolve,
        reject,
      };
      this.pending.set(id, batch);
      try {
        for (const [index, message] of messages.entries()) {
          this.nc.publish(message.subject, message.data, {
            reply: `${this.inbox}.${id}.${index}`,
            headers: message.headers,
          });
        }
      } catch (error) {
        this.fail(id, error as Error);
      }
    });
  }

  close(): void {
    this.closed = true;
    this.subscription.unsubscribe();
    for (const id of [...this.pending.keys()]) this.fail(id, new Error("publisher closed"));
  }

  private onReply(error: Error | null, msg: Msg): void {
    const [batchToken, indexToken] = msg.subject.slice(this.inbox.length + 1).split(".");
    const id = Number(batchToken);
    const batch = this.pending.get(id);
    if (!batch) return;
    const refusal = error ?? refusalOf(msg, batch.subjects[Number(indexToken)] ?? msg.subject);
    if (refusal) {
      this.fail(id, refusal);
    } else if (--batch.remaining === 0) {
      clearTimeout(batch.timer);
      this.pending.delete(id);
      batch.resolve();
    } else {
      batch.timer.refresh();
    }
  }

  private fail(id: number, error: Error): void {
    const batch = this.pending.get(id);
    if (!batch) return;
    clearTimeout(batch.timer);
    this.pending.delete(id);
    batch.reject(error);
  }
}

/** Why JetStream did not store the message `reply` answers, or undefined for a PubAck. */
function refusalOf(reply: Msg, subject: string): Error | undefined {
  // A status without a body (503 when no stream listens on the subject) instead of a PubAck.
  if (reply.headers?.hasError || reply.data.length === 0) {
    return new Error(
      `JetStream did not store ${subject}: ${reply.headers?.code ?? ""} ${reply.headers?.description ?? ""}`,
    );
  }
  let ack: { stream?: string; error?: { description?: string } };
  try {
    ack = reply.json();
  } catch {
    return new Error(`JetStream answered ${subject} with something other than a PubAck`);
  }
  if (ack.error || !ack.stream) {
    return new Error(`JetStream refused ${subject}: ${ack.error?.description ?? "no stream"}`);
  }
  return undefined;
}
