// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// A schema in the older Billions ABI, before schemas had a name.
struct LegacySchemaRecord {
    bytes32 id;
    address resolver;
    bool revocable;
    string schema;
}

/// Devnet stand-in for the older revision of Billions' SchemaRegistry, so that the indexer can be shown
/// to read both forms of the `Registered` event.
contract LegacySchemaRegistry {
    string public constant VERSION = "devnet-legacy-1.0.0";

    error SchemaAlreadyExists();
    error UserIdRequired();

    event Registered(bytes32 indexed id, address indexed registerer, uint256 indexed userId, LegacySchemaRecord schema);

    mapping(bytes32 => LegacySchemaRecord) private schemas;

    function register(string calldata schema, address resolver, bool revocable, uint256 userId) external returns (bytes32) {
        if (userId == 0) revert UserIdRequired();
        bytes32 id = keccak256(abi.encodePacked(schema, resolver, revocable));
        if (schemas[id].id != bytes32(0)) revert SchemaAlreadyExists();
        LegacySchemaRecord memory record = LegacySchemaRecord(id, resolver, revocable, schema);
        schemas[id] = record;
        emit Registered(id, msg.sender, userId, record);
        return id;
    }

    function getSchema(bytes32 id) external view returns (LegacySchemaRecord memory) {
        return schemas[id];
    }
}
