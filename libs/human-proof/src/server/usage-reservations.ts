import type { HumanUsageStorage } from "./types.ts";

type Reservation = { humanId: string; scope: string };

// The quota a payment took, keyed by its payload object: x402 hands the same object to every verify, settle
// and cancel hook of one request, so a failure path can give back exactly what was taken, and only once.
const reservations = new WeakMap<HumanUsageStorage, WeakMap<object, Reservation>>();

export function recordReservation(
  storage: HumanUsageStorage,
  paymentPayload: object,
  reservation: Reservation,
): void {
  let byPayload = reservations.get(storage);
  if (!byPayload) {
    byPayload = new WeakMap();
    reservations.set(storage, byPayload);
  }
  byPayload.set(paymentPayload, reservation);
}

/** Gives back the quota this payment took, if any; a second call for the same payment does nothing. */
export async function releaseReservation(storage: HumanUsageStorage, paymentPayload: object): Promise<void> {
  const byPayload = reservations.get(storage);
  const reservation = byPayload?.get(paymentPayload);
  if (!reservation) return;
  byPayload?.delete(paymentPayload);
  await storage.decrementIfAboveZero(reservation.humanId, reservation.scope);
}
