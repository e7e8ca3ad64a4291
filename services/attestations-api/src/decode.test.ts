import { encodeAbiParameters } from "viem";
import { describe, expect, it } from "vitest";
import { decodeAttestationData, decodedDataJson, schemaFields } from "./decode.ts";

describe("schemaFields", () => {
  it.each([
    ["bytes data", [{ name: "data", type: "bytes" }]],
    [
      "uint8 stars,string comment",
      [
        { name: "stars", type: "uint8" },
        { name: "comment", type: "string" },
      ],
    ],
    [
      " uint256[] xs ,  (uint8 a, bool b) t",
      [
        { name: "xs", type: "uint256[]" },
        { name: "t", type: "(uint8 a, bool b)" },
      ],
    ],
    ["", []],
    ["not a schema at all!", []],
  ])("%j", (schema, fields) => {
    expect(schemaFields(schema)).toEqual(fields);
  });
});

describe("decodeAttestationData", () => {
  it("gives every value as a string: integers in decimal, booleans, addresses, bytes, arrays and tuples as JSON", () => {
    const data = encodeAbiParameters(
      [
        { type: "uint256" },
        { type: "bool" },
        { type: "address" },
        { type: "bytes" },
        { type: "int8[]" },
        {
          type: "tuple",
          components: [
            { type: "uint8", name: "a" },
            { type: "string", name: "b" },
          ],
        },
      ],
      [2n ** 200n, true, "0x000000000000000000000000000000000000dEaD", "0xc0ffee", [-1, 2], { a: 7, b: "x" }],
    );
    const decoded = decodeAttestationData(
      "uint256 big,bool ok,address who,bytes blob,int8[] xs,(uint8 a, string b) pair",
      data,
    );
    expect(decoded.map((f) => f.value.value)).toEqual([
      (2n ** 200n).toString(),
      "true",
      "0x000000000000000000000000000000000000dEaD",
      "0xc0ffee",
      '["-1","2"]',
      '{"a":"7","b":"x"}',
    ]);
    expect(decoded[0]).toEqual({
      name: "big",
      type: "uint256",
      signature: "uint256 big",
      value: { name: "big", type: "uint256", value: (2n ** 200n).toString() },
    });
  });

  it("is empty when the data does not decode with the signature or the schema is unknown", () => {
    expect(decodeAttestationData("uint256 x", "0x1234")).toEqual([]);
    expect(decodeAttestationData(null, "0x")).toEqual([]);
    expect(decodedDataJson("string s", "0xzz")).toBe("[]");
  });

  it("decodedDataJson is the JSON text of the decoded array, the same on a second call", () => {
    const data = encodeAbiParameters([{ type: "uint8" }, { type: "string" }], [4, "ok"]);
    const first = decodedDataJson("uint8 stars,string comment", data);
    expect(JSON.parse(first)).toEqual(decodeAttestationData("uint8 stars,string comment", data));
    expect(decodedDataJson("uint8 stars,string comment", data)).toBe(first);
  });
});
