import type { OutboxTables } from "@humanpass/event-bus";

export interface Database extends OutboxTables {
  human_usage: { human_id: string; scope: string; count: number; updated_at: Date };
  used_proof_nonces: { nonce: string; expires_at: Date };
  proof_uses: { nonce: string; human_id: string; scope: string; expires_at: Date };
  payment_reservations: {
    network: string;
    asset: string;
    payer: string;
    nonce: string;
    expires_at: Date;
    claimed_by: string | null;
  };
}
