// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {SchemaRecord} from "./SchemaRegistry.sol";

struct Identity {
    string did;
    uint256 iden3Id;
    address ethereumAddress;
}

struct AttestationRequest {
    bytes32 schemaId;
    Identity attester;
    Identity recipient;
    uint256 expirationTime;
    bool revocable;
    bytes32 refId;
    bytes data;
}

struct Attestation {
    bytes32 id;
    bytes32 schemaId;
    uint64 creationTime;
    uint64 expirationTime;
    uint64 revocationTime;
    Identity attester;
    Identity recipient;
    bool revocable;
    bytes32 refId;
    bytes data;
}

interface ISchemaRegistry {
    function getSchema(bytes32 id) external view returns (SchemaRecord memory);
}

/// Devnet stand-in for Billions' AttestationRegistry (current ABI), without iden3 auth.
///
/// Differences from the real contract, on purpose: anyone may record; an attester address of zero in the
/// request is replaced by the sender (the relay address, as on Billions); revocation is allowed to the
/// attester address only, and only when the attestation's schema is revocable (the attestation's own
/// `revocable` flag is stored and reported, as the real registry does). `recordAttestations` and
/// `revokeAttestations` are devnet-only batch entry points so that tests can write thousands of records fast.
contract AttestationRegistry {
    string public constant VERSION = "devnet-1.0.0";

    error AttestationAlreadyExists();
    error AttestationAlreadyRevoked();
    error AttestationDoesNotExist();
    error AttesterDidRequired();
    error OnlyAttesterCanRevoke();
    error SchemaDoesNotAllowRevocation();
    error SchemaDoesNotExist();

    event AttestationRecorded(
        bytes32 indexed id,
        bytes32 indexed schemaId,
        uint256 attesterIden3Id,
        string recipientDid,
        uint256 recipientIden3Id,
        uint256 timestamp
    );
    event AttestationRevoked(
        bytes32 indexed id,
        address indexed revoker,
        uint256 indexed revokerIden3Id,
        string recipientDid,
        uint256 recipientIden3Id
    );

    /// Storage layout of a record: the ABI struct with `revocable` packed next to the times (one slot less).
    struct StoredAttestation {
        bytes32 schemaId;
        uint64 creationTime;
        uint64 expirationTime;
        uint64 revocationTime;
        bool revocable;
        Identity attester;
        Identity recipient;
        bytes32 refId;
        bytes data;
    }

    enum SchemaState {
        Unknown,
        Irrevocable,
        Revocable
    }

    ISchemaRegistry private immutable schemaRegistry;
    uint256 private nonce;
    mapping(bytes32 => StoredAttestation) private attestations;
    /// Schemas cannot change once registered, so what the registry said is kept instead of asked per record.
    mapping(bytes32 => SchemaState) private schemaStates;
    /// Ids by the iden3 ID of either party; the per-schema views filter this list, which keeps recording
    /// cheap (two index writes per record instead of four) at the cost of a scan in the views.
    mapping(uint256 => bytes32[]) private byUserId;

    constructor(ISchemaRegistry _schemaRegistry) {
        schemaRegistry = _schemaRegistry;
    }

    function getSchemaRegistryAddress() external view returns (ISchemaRegistry) {
        return schemaRegistry;
    }

    function recordAttestation(AttestationRequest calldata request) external returns (bytes32) {
        return _record(request);
    }

    function recordAttestations(AttestationRequest[] calldata requests) external returns (bytes32[] memory ids) {
        ids = new bytes32[](requests.length);
        for (uint256 i = 0; i < requests.length; i++) {
            ids[i] = _record(requests[i]);
        }
    }

    function revokeAttestation(bytes32 id) external returns (bool) {
        _revoke(id);
        return true;
    }

    function revokeAttestations(bytes32[] calldata ids) external {
        for (uint256 i = 0; i < ids.length; i++) {
            _revoke(ids[i]);
        }
    }

    function getAttestation(bytes32 id) external view returns (Attestation memory) {
        StoredAttestation storage stored = attestations[id];
        if (stored.creationTime == 0) revert AttestationDoesNotExist();
        return
            Attestation(
                id,
                stored.schemaId,
                stored.creationTime,
                stored.expirationTime,
                stored.revocationTime,
                stored.attester,
                stored.recipient,
                stored.revocable,
                stored.refId,
                stored.data
            );
    }

    function isAttestationValid(bytes32 id) external view returns (bool) {
        StoredAttestation storage attestation = attestations[id];
        return
            attestation.creationTime != 0 &&
            attestation.revocationTime == 0 &&
            (attestation.expirationTime == 0 || attestation.expirationTime > block.timestamp);
    }

    /// Every attestation in which the user is the attester or the recipient, oldest first.
    function getAttestationsByUserId(uint256 userId) external view returns (bytes32[] memory) {
        return byUserId[userId];
    }

    function getAttestationsByAttesterIden3IdAndSchemaId(
        uint256 attesterIden3Id,
        bytes32 schemaId
    ) external view returns (bytes32[] memory) {
        return _filter(attesterIden3Id, schemaId, true);
    }

    function getAttestationsByRecipientIden3IdAndSchemaId(
        uint256 recipientIden3Id,
        bytes32 schemaId
    ) external view returns (bytes32[] memory) {
        return _filter(recipientIden3Id, schemaId, false);
    }

    function _filter(uint256 userId, bytes32 schemaId, bool asAttester) private view returns (bytes32[] memory ids) {
        bytes32[] storage all = byUserId[userId];
        ids = new bytes32[](all.length);
        uint256 count = 0;
        for (uint256 i = 0; i < all.length; i++) {
            StoredAttestation storage attestation = attestations[all[i]];
            uint256 party = asAttester ? attestation.attester.iden3Id : attestation.recipient.iden3Id;
            if (party == userId && attestation.schemaId == schemaId) ids[count++] = all[i];
        }
        assembly {
            mstore(ids, count)
        }
    }

    function _record(AttestationRequest calldata request) private returns (bytes32 id) {
        if (bytes(request.attester.did).length == 0) revert AttesterDidRequired();
        if (_schemaState(request.schemaId) == SchemaState.Unknown) revert SchemaDoesNotExist();

        uint256 attesterId = request.attester.iden3Id;
        uint256 recipientId = request.recipient.iden3Id;
        // The nonce keeps ids unique; the parties keep them different across a reorg that replays the nonce.
        id = keccak256(
            abi.encode(block.chainid, address(this), ++nonce, request.schemaId, attesterId, recipientId, request.refId)
        );
        StoredAttestation storage attestation = attestations[id];
        if (attestation.creationTime != 0) revert AttestationAlreadyExists();

        attestation.schemaId = request.schemaId;
        attestation.creationTime = uint64(block.timestamp);
        attestation.expirationTime = uint64(request.expirationTime);
        attestation.revocable = request.revocable;
        attestation.attester = request.attester;
        if (request.attester.ethereumAddress == address(0)) attestation.attester.ethereumAddress = msg.sender;
        attestation.recipient = request.recipient;
        attestation.refId = request.refId;
        if (request.data.length > 0) attestation.data = request.data;

        byUserId[attesterId].push(id);
        if (recipientId != attesterId) byUserId[recipientId].push(id);

        emit AttestationRecorded(
            id,
            request.schemaId,
            attesterId,
            request.recipient.did,
            recipientId,
            block.timestamp
        );
    }

    function _revoke(bytes32 id) private {
        StoredAttestation storage attestation = attestations[id];
        if (attestation.creationTime == 0) revert AttestationDoesNotExist();
        if (attestation.revocationTime != 0) revert AttestationAlreadyRevoked();
        if (attestation.attester.ethereumAddress != msg.sender) revert OnlyAttesterCanRevoke();
        if (_schemaState(attestation.schemaId) != SchemaState.Revocable) revert SchemaDoesNotAllowRevocation();

        attestation.revocationTime = uint64(block.timestamp);
        emit AttestationRevoked(
            id,
            msg.sender,
            attestation.attester.iden3Id,
            attestation.recipient.did,
            attestation.recipient.iden3Id
        );
    }

    function _schemaState(bytes32 schemaId) private returns (SchemaState state) {
        state = schemaStates[schemaId];
        if (state != SchemaState.Unknown) return state;
        SchemaRecord memory schema = schemaRegistry.getSchema(schemaId);
        if (schema.id == bytes32(0)) return SchemaState.Unknown;
        state = schema.revocable ? SchemaState.Revocable : SchemaState.Irrevocable;
        schemaStates[schemaId] = state;
    }
}
