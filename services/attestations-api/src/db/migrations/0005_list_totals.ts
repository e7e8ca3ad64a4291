import { type Migration, sql } from "@humanpass/db";

/**
 * Totals of the two lists that grow with the chain, kept as attestations change instead of counted per request:
 * every listed attestation (scope '') and a schema's (scope = its id). Counting them on each page after the first
 * read every match: over a second at a million attestations. `list_attesters` holds, per scope, how many listed
 * attestations each attester has, so the number of distinct attesters moves only when one reaches or leaves zero.
 *
 * Statement triggers on `attestations` keep both, so every path that writes it (record, revocation, revert,
 * re-index) counts the same way, in the writing transaction, once per statement: a revert deleting thousands of
 * rows updates each total once (a row trigger would update the same total row thousands of times in one
 * transaction, each update slower than the last). Every counting statement first locks the row of scope '', which
 * they all update, so concurrent writers queue there before touching anything else and cannot deadlock. `recount_list_totals()` rebuilds both from the
 * table (after a bulk load with the triggers off).
 */
export const listTotalsMigration: Migration = {
  async up(db) {
    await sql`create table list_totals (
      scope text primary key,
      listed bigint not null,
      attesters bigint not null
    )`.execute(db);
    await sql`create table list_attesters (
      scope text not null,
      attester_did text not null,
      listed bigint not null,
      primary key (scope, attester_did)
    )`.execute(db);
    // One change per listed row gained (+1) or lost (-1): schema id, attester, delta.
    await sql`create function apply_listed_changes(in_schema_ids text[], in_attesters text[], in_deltas int[]) returns void
    language plpgsql as $$
    begin
      if coalesce(cardinality(in_deltas), 0) = 0 then
        return;
      end if;
      insert into list_totals (scope, listed, attesters) values ('', 0, 0) on conflict (scope) do nothing;
      perform 1 from list_totals where scope = '' for update;
      insert into list_totals (scope, listed, attesters)
        select distinct s, 0, 0 from unnest(in_schema_ids) s order by s
        on conflict (scope) do nothing;
      with c as (
        select * from unnest(in_schema_ids, in_attesters, in_deltas) as c(schema_id, attester_did, delta)
      ), d as (
        select '' as scope, attester_did, sum(delta) as delta from c group by attester_did having sum(delta) <> 0
        union all
        select schema_id, attester_did, sum(delta) from c group by schema_id, attester_did having sum(delta) <> 0
      ), up as (
        insert into list_attesters as l (scope, attester_did, listed) select scope, attester_did, delta from d
        on conflict (scope, attester_did) do update set listed = l.listed + excluded.listed
        returning l.scope, l.attester_did, l.listed
      ), moved as (
        select up.scope, d.delta, case
          when up.listed > 0 and up.listed - d.delta <= 0 then 1
          when up.listed <= 0 and up.listed - d.delta > 0 then -1
          else 0 end as attesters
        from up join d on d.scope = up.scope and d.attester_did = up.attester_did
      )
      update list_totals t set listed = t.listed + m.listed, attesters = t.attesters + m.attesters
      from (select scope, sum(delta) as listed, sum(attesters) as attesters from moved group by scope) m
      where t.scope = m.scope;
    end $$`.execute(db);
    await sql`create function count_listed_inserted() returns trigger language plpgsql as $$
    begin
      perform apply_listed_changes(array_agg(schema_id), array_agg(attester_did), array_agg(1))
        from inserted where not revoked;
      return null;
    end $$`.execute(db);
    await sql`create function count_listed_deleted() returns trigger language plpgsql as $$
    begin
      perform apply_listed_changes(array_agg(schema_id), array_agg(attester_did), array_agg(-1))
        from deleted where not revoked;
      return null;
    end $$`.execute(db);
    await sql`create function count_listed_updated() returns trigger language plpgsql as $$
    begin
      perform apply_listed_changes(array_agg(schema_id), array_agg(attester_did), array_agg(delta)) from (
        select schema_id, attester_did, -1 as delta from deleted where not revoked
        union all select schema_id, attester_did, 1 from inserted where not revoked
      ) changes;
      return null;
    end $$`.execute(db);
    await sql`create trigger attestations_listed_inserted after insert on attestations
      referencing new table as inserted for each statement execute function count_listed_inserted()`.execute(
      db,
    );
    await sql`create trigger attestations_listed_deleted after delete on attestations
      referencing old table as deleted for each statement execute function count_listed_deleted()`.execute(
      db,
    );
    await sql`create trigger attestations_listed_updated after update on attestations
      referencing old table as deleted new table as inserted for each statement
      execute function count_listed_updated()`.execute(db);
    await sql`create function recount_list_totals() returns void language sql as $$
      delete from list_attesters;
      delete from list_totals;
      insert into list_attesters (scope, attester_did, listed)
        select '', attester_did, count(*) from attestations where not revoked group by attester_did
        union all
        select schema_id, attester_did, count(*) from attestations where not revoked group by schema_id, attester_did;
      insert into list_totals (scope, listed, attesters)
        select scope, sum(listed), count(*) from list_attesters group by scope;
    $$`.execute(db);
    await sql`select recount_list_totals()`.execute(db);
  },
};
