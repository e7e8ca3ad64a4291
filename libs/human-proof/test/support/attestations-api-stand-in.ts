/**
 * STAND-IN for the attestations API (spec 2), for this library's tests only, until the real
 * services/attestations-api can be started by tests. It serves spec-2-shaped responses from an in-test
 * fixture over real HTTP on 127.0.0.1 (port 0): the paginated `/api/v1/attestations` list with its filters
 * (revoked records left out) and `/api/v1/nullifier` with its 400s. Nothing here is production code.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { didFromAddress, iden3IdFromAddress } from "@humanpass/identity";
import { DEFAULT_AGENT_OWNERSHIP_SCHEMA } from "../../src/common/constants.ts";

export type FixtureAttestation = {
  id: string;
  creationTime: number;
  schemaId: string;
  fromDid: string;
  fromId: string;
  fromEthereumAddress: string;
  toDid: string;
  toId: string;
  toEthereumAddress: string;
  revoked?: boolean;
};

export type StandInFixture = {
  attestations: FixtureAttestation[];
  /** userId → nullifier; null answers 200 with a null nullifier; an absent userId answers 404 `Nullifier not found`, as services/attestations-api does. */
  nullifiers: Record<string, string | null>;
};

export type AttestationsApiStandIn = {
  /** …/api/v1 */
  baseUrl: string;
  /** …/api/v1/attestations, the SDK's `attestationsApiBaseUrl`. */
  attestationsUrl: string;
  /** …/api/v1/nullifier, the SDK's `nullifierApiBaseUrl`. */
  nullifierUrl: string;
  fixture: StandInFixture;
  /** Every request URL received, in order. */
  requests: URL[];
  /** Answer every request (or those whose path ends with `onlyPath`) with this status until set back to null. */
  failWith(status: number | null, onlyPath?: string): void;
  /** Answer every request 200 with this JSON body (e.g. a malformed one) until set back to undefined. */
  answerWith(body: unknown): void;
  /** Wait this long before answering every request. */
  delay(ms: number): void;
  close(): Promise<void>;
};

const PAGE_SIZE = 2;

let attestationCounter = 0;

export type Human = { did: string; id: string; address: `0x${string}` };

/** A human identity as the registry stores it (DID, iden3 ID, address), derived from an address. */
export function humanFromAddress(address: `0x${string}`): Human {
  return { did: didFromAddress(address, "main"), id: iden3IdFromAddress(address, "main"), address };
}

/** An AgentOwnership record from `human` to the agent with EVM address `agent`. */
export function ownershipAttestation(
  human: Human,
  agent: `0x${string}`,
  overrides: Partial<FixtureAttestation> = {},
): FixtureAttestation {
  attestationCounter += 1;
  return {
    id: `0x${attestationCounter.toString(16).padStart(64, "0")}`,
    creationTime: 1_760_000_000 + attestationCounter,
    schemaId: DEFAULT_AGENT_OWNERSHIP_SCHEMA,
    fromDid: human.did,
    fromId: human.id,
    fromEthereumAddress: human.address,
    toDid: didFromAddress(agent, "main"),
    toId: iden3IdFromAddress(agent, "main"),
    toEthereumAddress: agent,
    ...overrides,
  };
}

function listItem(a: FixtureAttestation) {
  return {
    id: a.id,
    creationTime: a.creationTime,
    schemaInfo: {
      index: "1",
      id: a.schemaId,
      name: a.schemaId === DEFAULT_AGENT_OWNERSHIP_SCHEMA ? "AgentOwnership" : "Other",
      schemaSignatures: [{ name: "data", type: "bytes" }],
    },
    fromName: "",
    toName: "",
    fromDid: a.fromDid,
    toDid: a.toDid,
    fromId: a.fromId,
    toId: a.toId,
    fromEthereumAddress: a.fromEthereumAddress,
    toEthereumAddress: a.toEthereumAddress,
    decodedDataJson: JSON.stringify([
      {
        name: "data",
        type: "bytes",
        signature: "bytes data",
        value: { name: "data", type: "bytes", value: "0x" },
      },
    ]),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function answerList(url: URL, fixture: StandInFixture, res: ServerResponse): void {
  const q = url.searchParams;
  const eq = (a: string, b: string | null) => b === null || a.toLowerCase() === b.toLowerCase();
  const matches = fixture.attestations.filter(
    (a) =>
      !a.revoked &&
      eq(a.schemaId, q.get("schemaId")) &&
      eq(a.toDid, q.get("recipientDid")) &&
      eq(a.toEthereumAddress, q.get("recipientEthereumAddress")) &&
      eq(a.fromDid, q.get("attesterDid")),
  );
  const pageSize = Number(q.get("page_size") ?? PAGE_SIZE);
  const pageNumber = Number(q.get("page_number") ?? 1);
  const totalPages = Math.max(1, Math.ceil(matches.length / pageSize));
  send(res, 200, {
    totalItems: matches.length,
    uniqueItems: new Set(matches.map((a) => a.fromDid)).size,
    totalPages,
    pageNumber,
    pageSize,
    nextPage: pageNumber < totalPages ? pageNumber + 1 : null,
    data: matches.slice((pageNumber - 1) * pageSize, pageNumber * pageSize).map(listItem),
  });
}

function answerNullifier(url: URL, fixture: StandInFixture, res: ServerResponse): void {
  const userId = url.searchParams.get("userId");
  if (userId === null || userId === "") send(res, 400, { message: "userId query parameter is required" });
  else if (!/^[0-9]+$/.test(userId)) send(res, 400, { message: "userId must be a valid integer" });
  else if (!(userId in fixture.nullifiers)) send(res, 404, { message: "Nullifier not found" });
  else send(res, 200, { userId, nullifier: fixture.nullifiers[userId] });
}

export async function startAttestationsApiStandIn(fixture: StandInFixture): Promise<AttestationsApiStandIn> {
  const requests: URL[] = [];
  let failure: number | null = null;
  let failurePath = "";
  let fixedBody: unknown;
  let delayMs = 0;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(url);
    const answer = () => {
      if (failure !== null && url.pathname.endsWith(failurePath))
        send(res, failure, { message: "unavailable" });
      else if (fixedBody !== undefined) send(res, 200, fixedBody);
      else if (req.method !== "GET") send(res, 405, { message: "method not allowed" });
      else if (url.pathname === "/api/v1/attestations") answerList(url, fixture, res);
      else if (url.pathname === "/api/v1/nullifier") answerNullifier(url, fixture, res);
      else send(res, 404, { message: "not found" });
    };
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}/api/v1`;

  return {
    baseUrl,
    attestationsUrl: `${baseUrl}/attestations`,
    nullifierUrl: `${baseUrl}/nullifier`,
    fixture,
    requests,
    failWith(status, onlyPath = "") {
      failure = status;
      failurePath = onlyPath;
    },
    answerWith(body) {
      fixedBody = body;
    },
    delay(ms) {
      delayMs = ms;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
