// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// A schema as the current Billions SchemaRegistry returns and emits it (the revision that added `name`).
struct SchemaRecord {
    bytes32 id;
    address resolver;
    bool revocable;
    string schema;
    string name;
}

/// Devnet stand-in for Billions' SchemaRegistry (current ABI). Registration is open: the devnet has no
/// iden3 auth, so `userId` is taken as given; it must only be non-zero, as on the real registry.
contract SchemaRegistry {
    string public constant VERSION = "devnet-1.0.0";

    error SchemaAlreadyExists();
    error UserIdRequired();

    event Registered(bytes32 indexed id, address indexed registerer, uint256 indexed userId, SchemaRecord schema);

    mapping(bytes32 => SchemaRecord) private schemas;

    function register(
        string calldata name,
        string calldata schema,
        address resolver,
        bool revocable,
        uint256 userId
    ) external returns (bytes32) {
        if (userId == 0) revert UserIdRequired();
        bytes32 id = keccak256(abi.encodePacked(name, schema, resolver, revocable));
        if (schemas[id].id != bytes32(0)) revert SchemaAlreadyExists();
        SchemaRecord memory record = SchemaRecord(id, resolver, revocable, schema, name);
        schemas[id] = record;
        emit Registered(id, msg.sender, userId, record);
        return id;
    }

    /// Returns an all-zero record for an unknown id, like the real registry.
    function getSchema(bytes32 id) external view returns (SchemaRecord memory) {
        return schemas[id];
    }
}
