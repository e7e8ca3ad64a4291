import type {
  HumanProofEvent,
  HumanUsageStorage,
  NonceStore,
  ProofAdmission,
  ProofAdmissions,
} from "./types.ts";

export type SequentialAdmissionsOptions = {
  nonceStore: NonceStore;
  /** Needed for admissions that take a use. */
  storage?: HumanUsageStorage;
  /** Where the events are recorded, if anywhere besides `onEvent`. */
  recordEvents?: (events: HumanProofEvent[]) => Promise<void>;
};

/**
 * Admissions from separate stores, one step after another: each step is atomic on its own, and a nonce that
 * was used already stops the rest, so nothing is taken twice; a crash between the steps can leave a nonce
 * consumed with no use taken (the agent signs a new proof) or events unrecorded.
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
  };
}

async function takeUse(storage: HumanUsageStorage | undefined, { use }: ProofAdmission) {
  if (!use) return null;
  if (!storage) throw new Error("an admission that takes a use needs a HumanUsageStorage");
  return storage.incrementIfBelow(use.humanId, use.maxUse, use.scope);
}

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
