import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../common/constants.ts";
import { type CheckAttestationOptions, checkAttestation } from "./check-attestation.ts";

export type AttestationAwareSelector = {
  /** Synchronous selector for `new x402Client(selector)`. */
  selector: (x402Version: number, requirements: PaymentRequirements[]) => PaymentRequirements;
  /**
   * Re-reads which schemas the DID holds: the configured ones plus every schema required by the `accepts`
   * of `paymentRequired` when given. The human-proof client extension calls it on every 402 before the
   * selector runs; call it yourself when you use the selector without the extension.
   */
  refresh: (paymentRequired?: Pick<PaymentRequired, "accepts">) => Promise<void>;
  /** From now on the selector skips tiers with `requiredAttestations` (after a `max_use_exceeded`). */
  disqualify: () => void;
  /** The selector skips the tiers with `requiredAttestations` of this one 402 (a challenge the agent will not sign). */
  skipDiscountedTiersOf: (paymentRequired: Pick<PaymentRequired, "accepts">) => void;
};

export function requiredAttestationsOf(
  requirements: Pick<PaymentRequirements, "extra"> | undefined,
): string[] {
  const value = requirements?.extra?.requiredAttestations;
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string" && s !== "") : [];
}

/**
 * Picks the first discounted tier (one with `extra.requiredAttestations`) whose every schema the agent DID
 * holds according to `checkAttestation`, else the first tier without requirements.
 * An attestation that cannot be checked counts as not held, so the agent pays the standard price.
 */
export function createAttestationAwareSelector(
  did: string,
  schemas: string[] = [DEFAULT_AGENT_OWNERSHIP_SCHEMA],
  options?: CheckAttestationOptions,
): AttestationAwareSelector {
  let held = new Set<string>();
  let disqualified = false;
  // Requirement objects of single 402s whose discount the agent will not take; x402 hands the selector those objects.
  const skipped = new WeakSet<PaymentRequirements>();

  const holds = async (schema: string): Promise<boolean> => {
    try {
      return await checkAttestation(did, schema, options);
    } catch {
      return false;
    }
  };

  return {
    selector(_x402Version, requirements) {
      if (!disqualified) {
        const discounted = requirements.find((requirement) => {
          const needed = requiredAttestationsOf(requirement);
          return needed.length > 0 && !skipped.has(requirement) && needed.every((schema) => held.has(schema));
        });
        if (discounted) return discounted;
      }
      return (
        requirements.find((requirement) => requiredAttestationsOf(requirement).length === 0) ??
        requirements[0]
      );
    },
    async refresh(paymentRequired) {
      const wanted = new Set([
        ...schemas,
        ...(paymentRequired?.accepts ?? []).flatMap(requiredAttestationsOf),
      ]);
      const checked = await Promise.all(
        [...wanted].map(async (schema) => ((await holds(schema)) ? schema : null)),
      );
      held = new Set(checked.filter((schema): schema is string => schema !== null));
    },
    disqualify() {
      disqualified = true;
    },
    skipDiscountedTiersOf(paymentRequired) {
      for (const requirement of paymentRequired.accepts) {
        if (requiredAttestationsOf(requirement).length > 0) skipped.add(requirement);
      }
    },
  };
}
