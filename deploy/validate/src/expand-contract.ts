/**
 * Expand → contract across two releases: a migration that drops or renames something must say what and the release
 * whose code stopped using it, and that release must be earlier than the one shipping the migration; otherwise a
 * rollback puts the previous release's code on a schema without what it reads.
 */
import type { ContractMigration, Migration } from "@humanpass/db";

// Statements a migration runs, as its `up` reads: raw SQL or Kysely's schema builder.
const DESTRUCTIVE =
  /\bdrop\s+(table|column|view|type|schema|function)\b|\.drop(Table|Column|View|Type|Schema)\(|\brename\s+(to|column)\b|\.rename(To|Column)\(/i;

export interface ServiceMigrations {
  service: string;
  /** The release the service's code is at (its package version). */
  version: string;
  migrations: Record<string, Migration | ContractMigration>;
  /** The service's own code, migrations excluded: what it still uses. */
  code: string;
}

const releaseOrder = (a: string, b: string) => {
  const [x, y] = [a, b].map((v) => v.split(".").map(Number));
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! - y![i]!;
  return 0;
};

/** What breaks the rule, one line each; `shipped` names `service/migration` pairs released before it existed. */
export function expandContractProblems(
  services: ServiceMigrations[],
  shipped: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const { service, version, migrations, code } of services) {
    for (const [name, migration] of Object.entries(migrations)) {
      const where = `${service}/${name}`;
      const contract = "contract" in migration ? migration.contract : undefined;
      if (!contract) {
        if (DESTRUCTIVE.test(migration.up.toString()))
          problems.push(
            `${where} drops or renames without declaring what and since when it is unused (contract)`,
          );
        continue;
      }
      if (!shipped.has(where) && releaseOrder(contract.unusedSince, version) >= 0)
        problems.push(
          `${where} removes ${contract.removes.join(", ")} in release ${version}, which is not after the release that ` +
            `stopped using it (${contract.unusedSince}): ship the code change first, the migration in a later release`,
        );
      for (const object of contract.removes)
        if (new RegExp(`\\b${object}\\b`).test(code))
          problems.push(`${where} removes ${object}, which the code still names`);
    }
  }
  return problems;
}
