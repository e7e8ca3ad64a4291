import type { Counter, Histogram } from "@humanpass/telemetry";
import type { Clock } from "../clock";
import type { VerifierSettings } from "../config";
import type { NewSession, ReportedStatus } from "../db/sessions";
import type { RecordOutcome } from "../db/verifications";
import type { AuthorizationRequest, TokenVerifier, VerifiedNullifier } from "../verification/token-verifier";

/** What the routes use, already bound to the database and topology by the app factory. */
export interface RouteDeps {
  settings: VerifierSettings;
  clock: Clock;
  verifier: TokenVerifier;
  sessions: {
    create(session: NewSession): Promise<{ sessionId: number; request: AuthorizationRequest }>;
    liveRequest(sessionId: bigint, now: Date): Promise<AuthorizationRequest | undefined>;
    status(sessionId: bigint, now: Date): Promise<ReportedStatus>;
  };
  instruments: {
    /** Wallet callbacks by `outcome`. */
    callbacks: Counter;
    /** A token's verification (queue wait included), by `outcome` `ok` or `rejected`. */
    verificationDuration: Histogram;
  };
  recordVerification(input: {
    sessionId: bigint;
    proof: VerifiedNullifier;
    now: Date;
  }): Promise<RecordOutcome>;
}
