import type { Clock } from "@humanpass/service";
import type { Counter, Histogram } from "@humanpass/telemetry";
import type { VerifierSettings } from "../config.ts";
import type { NewSession, ReportedStatus } from "../db/sessions.ts";
import type { RecordOutcome } from "../db/verifications.ts";
import type {
  AuthorizationRequest,
  TokenVerifier,
  VerifiedNullifier,
} from "../verification/token-verifier.ts";

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
