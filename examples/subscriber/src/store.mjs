/**
 * The subscriber's own tables: every human_verified event applied (keyed by the CloudEvents id, so a redelivered
 * event is recognised), the humans it verified, and what it had to give up on.
 */
export async function migrate(pool, schema) {
  await pool.query(`
    create schema if not exists ${schema};
    create table if not exists human_verifications (
      event_id text primary key,
      stream text not null,
      human_id text not null,
      human_did text not null,
      agent_did text,
      resource text not null,
      verified_at timestamptz not null,
      applied_at timestamptz not null default now()
    );
    create table if not exists verified_humans (
      human_id text primary key,
      human_did text not null,
      first_verified_at timestamptz not null,
      last_verified_at timestamptz not null,
      verifications integer not null
    );
    create table if not exists dead_letters (
      stream text not null,
      stream_sequence bigint not null,
      attempts integer not null,
      error text not null,
      payload text not null,
      dead_lettered_at timestamptz not null,
      primary key (stream, stream_sequence)
    );`);
}

/**
 * Applies one event once: the id is recorded in the same transaction as its effect, so an event delivered again
 * (after a crash between commit and ack) changes nothing. Resolves with whether it was new.
 */
export async function applyHumanVerified(pool, stream, event) {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const { rowCount } = await client.query(
      `insert into human_verifications (event_id, stream, human_id, human_did, agent_did, resource, verified_at)
       values ($1, $2, $3, $4, $5, $6, $7) on conflict (event_id) do nothing`,
      [
        event.id,
        stream,
        event.data.humanId,
        event.data.humanDid,
        event.data.agentDid ?? null,
        event.data.resource,
        event.data.verifiedAt,
      ],
    );
    if (rowCount === 1)
      await client.query(
        `insert into verified_humans (human_id, human_did, first_verified_at, last_verified_at, verifications)
         values ($1, $2, $3, $3, 1)
         on conflict (human_id) do update set
           last_verified_at = greatest(verified_humans.last_verified_at, excluded.last_verified_at),
           first_verified_at = least(verified_humans.first_verified_at, excluded.first_verified_at),
           verifications = verified_humans.verifications + 1`,
        [event.data.humanId, event.data.humanDid, event.data.verifiedAt],
      );
    await client.query("commit");
    return rowCount === 1;
  } catch (e) {
    await client.query("rollback").catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

export async function recordDeadLetter(pool, letter) {
  await pool.query(
    `insert into dead_letters (stream, stream_sequence, attempts, error, payload, dead_lettered_at)
     values ($1, $2, $3, $4, $5, $6) on conflict do nothing`,
    [
      letter.stream,
      letter.streamSequence,
      letter.attempts,
      letter.error,
      letter.payload,
      letter.deadLetteredAt,
    ],
  );
}
