import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { runMain } from "./support/gateway-process.ts";

describe("payment-gateway started in production with a placeholder", () => {
  it("refuses to start with the zero EVM_ADDRESS, naming the setting (exit 78, before connecting anywhere)", async () => {
    const child = runMain({
      NODE_ENV: "production",
      EVM_ADDRESS: "0x0000000000000000000000000000000000000000",
      FACILITATOR_URL: "https://facilitator.humanpass.test",
      HUMAN_PROOF_NONCE_KEYS: "k".repeat(32),
      // Nothing listens there: a service that went on would hang or fail differently.
      DATABASE_URL: "postgres://payment_gateway@127.0.0.1:9/humanpass",
      NATS_URL: "nats://127.0.0.1:9",
    });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(78);
    expect(stderr).toContain(
      "payment-gateway: invalid configuration:\n  EVM_ADDRESS: the zero address is a placeholder: set this deployment's own value (refused when NODE_ENV=production)",
    );
  });
});
