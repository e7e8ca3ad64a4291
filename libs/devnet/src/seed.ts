import type { Hex } from "viem";
import type { Devnet } from "./devnet.ts";
import {
  encodeSchemaData,
  ensureSchema,
  type Identity,
  identityFromAddress,
  recordAttestation,
} from "./registries.ts";

export const AGENT_OWNERSHIP_SCHEMA = { name: "AgentOwnership", schema: "bytes data" } as const;
export const REVIEW_SCHEMA = { name: "Review", schema: "uint8 stars,string comment" } as const;

export interface SeededAttestation {
  id: Hex;
  attester: Identity;
  recipient: Identity;
}

export interface DemoSeed {
  schemas: { agentOwnership: Hex; review: Hex };
  humans: Identity[];
  agents: Identity[];
  /** Human → agent ownership attestations (AgentOwnership). */
  pairings: SeededAttestation[];
  /** Human → agent reviews (Review). */
  reviews: (SeededAttestation & { stars: number; comment: string })[];
}

const REVIEWS = [
  { human: 1, agent: 0, stars: 5, comment: "Booked the right flight on the first try" },
  { human: 2, agent: 0, stars: 4, comment: "Good, a little slow" },
  { human: 0, agent: 2, stars: 3, comment: "Needed two reminders" },
];

/**
 * Demo data: the `AgentOwnership` and `Review` schemas (registered unless present), three humans (devnet accounts
 * 1–3) pairing with four agents (accounts 4–7), and a few reviews. Every DID and iden3 ID is the one
 * Billions derives from the account's address (`did:iden3:billions:main:…`); each human sends its own
 * attestations, so the attester address is the human's.
 */
export async function seedDemo(devnet: Devnet): Promise<DemoSeed> {
  if (devnet.accounts.length < 8) throw new Error("seedDemo needs a devnet with at least 8 accounts");
  const agentOwnership = await ensureSchema(devnet, { ...AGENT_OWNERSHIP_SCHEMA, revocable: true });
  const review = await ensureSchema(devnet, { ...REVIEW_SCHEMA, revocable: true });
  const humans = devnet.accounts.slice(1, 4).map((account) => identityFromAddress(account.address));
  const agents = devnet.accounts.slice(4, 8).map((account) => identityFromAddress(account.address));

  const pairings: SeededAttestation[] = [];
  for (const [human, agent] of [
    [humans[0]!, agents[0]!],
    [humans[0]!, agents[1]!],
    [humans[1]!, agents[2]!],
    [humans[2]!, agents[3]!],
  ] as const) {
    // Billions reports ownership attestations as not revocable; the schema still lets the attester revoke.
    const { id } = await recordAttestation(devnet, {
      schemaId: agentOwnership,
      attester: human,
      recipient: agent,
      revocable: false,
      data: encodeSchemaData(AGENT_OWNERSHIP_SCHEMA.schema, ["0x"]),
    });
    pairings.push({ id, attester: human, recipient: agent });
  }

  const reviews: DemoSeed["reviews"] = [];
  for (const { human, agent, stars, comment } of REVIEWS) {
    const { id } = await recordAttestation(devnet, {
      schemaId: review,
      attester: humans[human]!,
      recipient: agents[agent]!,
      data: encodeSchemaData(REVIEW_SCHEMA.schema, [stars, comment]),
    });
    reviews.push({ id, attester: humans[human]!, recipient: agents[agent]!, stars, comment });
  }

  return {
    schemas: { agentOwnership, review },
    humans,
    agents,
    pairings,
    reviews,
  };
}

/** JSON-safe form of a seed (iden3 IDs as decimal strings). */
export function seedToJson(seed: DemoSeed): unknown {
  return JSON.parse(
    JSON.stringify(seed, (_key, value) => (typeof value === "bigint" ? value.toString() : value)),
  );
}
