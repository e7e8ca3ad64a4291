import { didFromAddress, networkForChainId } from "@humanpass/identity";
import { DID, Id } from "@iden3/js-iden3-core";
import type { Static } from "@sinclair/typebox";
import type { AttestationListRow, AttestationRow, Page, PageRequest, SchemaRow } from "./db/types.ts";
import { decodedDataJson, schemaFields } from "./decode.ts";
import type {
  AttestationListItem,
  AttestationSingle,
  SchemaListItem,
  SchemaSingle,
} from "./routes/shapes.ts";

export function envelope<R, T>(page: Page<R>, request: PageRequest, present: (row: R) => T) {
  const totalPages = Math.ceil(page.total / request.size);
  return {
    totalItems: page.total,
    uniqueItems: page.unique,
    totalPages,
    pageNumber: request.number,
    pageSize: request.size,
    nextPage: request.number < totalPages ? request.number + 1 : null,
    data: page.rows.map(present),
  };
}

export function attestationItem(row: AttestationListRow): Static<typeof AttestationListItem> {
  return {
    id: row.id,
    creationTime: Number(row.creation_time),
    schemaInfo: {
      index: row.schema_index ?? "",
      id: row.schema_id,
      name: row.schema_name ?? "",
      schemaSignatures: row.schema_raw ? schemaFields(row.schema_raw) : [],
    },
    // No name registry is indexed yet: names are display-only and spec 2 allows them empty.
    fromName: "",
    toName: "",
    fromDid: row.attester_did,
    toDid: row.recipient_did,
    fromId: row.attester_iden3_id,
    toId: row.recipient_iden3_id,
    fromEthereumAddress: row.attester_address,
    toEthereumAddress: row.recipient_address,
    decodedDataJson: decodedDataJson(row.schema_raw, row.data),
  };
}

export function attestationSingle(row: AttestationRow): Static<typeof AttestationSingle> {
  return {
    ...attestationItem(row),
    txid: row.tx_hash,
    expirationTime: Number(row.expiration_time),
    revocable: row.revocable,
    revoked: row.revoked,
    revocationTime: Number(row.revocation_time),
    rawData: row.data,
  };
}

export function schemaItem(row: SchemaRow): Static<typeof SchemaListItem> {
  return {
    index: row.schema_index,
    id: row.id,
    name: row.name,
    resolver: row.resolver,
    attestationsCount: Number(row.attestations_count),
    schemaSignatures: schemaFields(row.schema_raw),
  };
}

/** The registerer's DID: from its iden3 ID when the registry recorded one, else derived from its address. */
function creatorIdentity(row: SchemaRow): { did: string; id: string } {
  if (row.creator_iden3_id !== "0") {
    try {
      return {
        did: DID.parseFromId(Id.fromBigInt(BigInt(row.creator_iden3_id))).string(),
        id: row.creator_iden3_id,
      };
    } catch {
      // Not a well-formed iden3 ID: fall back to the address-derived identity.
    }
  }
  let network: "main" | "test" = "main";
  try {
    network = networkForChainId(row.chain_id);
  } catch {
    // A chain that is not a Billions network (a local devnet with another id) reads as main.
  }
  const did = didFromAddress(row.creator, network);
  return { did, id: DID.idFromDID(DID.parse(did)).bigInt().toString() };
}

export function schemaSingle(
  row: SchemaRow,
  attestations: ReturnType<typeof envelope<AttestationListRow, Static<typeof AttestationListItem>>>,
): Static<typeof SchemaSingle> {
  const creator = creatorIdentity(row);
  return {
    ...schemaItem(row),
    creator: row.creator,
    creatorDid: creator.did,
    creatorId: creator.id,
    txid: row.tx_hash,
    revocable: row.revocable,
    schemaRaw: row.schema_raw,
    attestations,
  };
}
