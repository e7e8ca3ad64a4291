import type {
  HumanProofEvent,
  HumanUsageStorage,
  ProofAdmission,
  ProofAdmissions,
  UsedNonceStore,
} from "./types.ts";

export type SequentialAdmissionsOptions = {
  nonceStore: UsedNonceStore;
  /** Needed for admissions that take a use. */
  storage?: HumanUsageStorage;
  /** Where the events are recorded, if anywhere besides `onEvent`. */
  recordEvents?: (events: HumanProofEvent[]) => Promise<void>;
};

type TakenUse = { humanId: string; scope: string; until: number };

// The uses taken through each storage, by the nonce of the proof that took them: every instance of
// `sequentialAdmissions` and every rollback hook on one storage refunds from the same ledger.
const ledgers = new WeakMap<HumanUsageStorage, Map<string, TakenUse>>();

function ledgerOf(storage: HumanUsageStorage): Map<string, TakenUse> {
  let ledger = ledgers.get(storage);
  if (!ledger) {
    ledger = new Map();
    ledgers.set(storage, ledger);
  }
  return ledger;
}

/**
 * Gives back, once, the use the proof with `nonce` took through `storage` in this process (a `storage`-only
 * set-up, as Billions' rollback hooks take it). A store that admits in one step refunds by its own record instead.
 */
export async function refundThrough(storage: HumanUsageStorage, nonce: string): Promise<void> {
  const ledger = ledgerOf(storage);
  const taken = ledger.get(nonce);
  if (!taken) return;
  ledger.delete(nonce);
  await storage.decrementIfAboveZero(taken.humanId, taken.scope);
}

/**
 * Admissions from separate stores, one step after another: each step is atomic on its own, and a nonce that
 * was used already stops the rest, so nothing is taken twice; a crash between the steps can leave a nonce
 * consumed with no use taken (the agent signs a new proof) or events unrecorded. Which proof took which use is
 * remembered in this process until the proof expires, for `refund`.
 */
export function sequentialAdmissions(options: SequentialAdmissionsOptions): ProofAdmissions {
  const { nonceStore, storage, recordEvents } = options;
  return {
    async admit(admission) {
      if (!(await nonceStore.consume(admission.nonce, admission.nonceExpiresAt)))
        return { nonceFresh: false, count: null };
      const count = await takeUse(storage, admission);
      await recordEvents?.(eventsOf(admission, count));
      return { nonceFresh: true, count };
    },
    async refund(nonce) {
      if (storage) await refundThrough(storage, nonce);
    },
  };
}

async function takeUse(
  storage: HumanUsageStorage | undefined,
  { use, nonce, nonceExpiresAt }: ProofAdmission,
) {
  if (!use) return null;
  if (!storage) throw new Error("an admission that takes a use needs a HumanUsageStorage");
  const count = await storage.incrementIfBelow(use.humanId, use.maxUse, use.scope);
  if (count !== null) {
    const ledger = ledgerOf(storage);
    const now = Date.now();
    // Insertion order is expiry order, near enough: the oldest go first.
    for (const [expired, { until }] of ledger) {
      if (until > now) break;
      ledger.delete(expired);
    }
    // Kept past the proof's own expiry: a request admitted late in its proof's life may still fail after it.
    ledger.set(nonce, {
      humanId: use.humanId,
      scope: use.scope,
      until: nonceExpiresAt.getTime() + REFUND_GRACE_MS,
    });
  }
  return count;
}

/** How long after its proof expires a request's use can still be given back. */
export const REFUND_GRACE_MS = 3_600_000;

/** The events a fresh admission produces: its own, and `max_use_exceeded` when its use was refused. */
export function eventsOf(admission: ProofAdmission, count: number | null): HumanProofEvent[] {
  const { use, resource, events } = admission;
  return use && count === null ? [...events, maxUseExceededEvent(resource, use)] : events;
}

/** The event of an admission whose use was refused at the cap. */
export function maxUseExceededEvent(
  resource: string,
  use: NonNullable<ProofAdmission["use"]>,
): Extract<HumanProofEvent, { type: "max_use_exceeded" }> {
  return { type: "max_use_exceeded", resource, humanId: use.humanId, maxUse: use.maxUse, scope: use.scope };
}
