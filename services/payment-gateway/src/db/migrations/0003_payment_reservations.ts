import type { Migration } from "@humanpass/db";

export const paymentReservationsMigration: Migration = {
  async up(db) {
    // One row per EIP-3009 authorization a paid request is running with (the chain's own key: token, payer,
    // nonce), so concurrent copies of one payment run the handler once.
    await db.schema
      .createTable("payment_reservations")
      .addColumn("network", "text", (c) => c.notNull())
      .addColumn("asset", "text", (c) => c.notNull())
      .addColumn("payer", "text", (c) => c.notNull())
      .addColumn("nonce", "text", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("payment_reservations_pkey", ["network", "asset", "payer", "nonce"])
      .execute();
    await db.schema
      .createIndex("payment_reservations_expires_at")
      .on("payment_reservations")
      .column("expires_at")
      .execute();
  },
};
