/**
 * Test harness only: an x402-paid HTTP server on node:http (127.0.0.1, port 0) built from @x402/core's
 * x402HTTPResourceServer, with a scripted in-process facilitator, so the human-proof extension and hooks run
 * in the real x402 request flow. The production Fastify mount lives in libs/x402-fastify.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  FacilitatorClient,
  HTTPAdapter,
  HTTPResponseInstructions,
  PaywallProvider,
  RoutesConfig,
} from "@x402/core/server";
import { x402HTTPResourceServer, type x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { HumanProofResourceServer } from "../../src/server/index.ts";

export const NETWORK = "eip155:45056";
export const ASSET = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238";

/** A facilitator whose answers each test scripts; it records what it was asked to settle. */
export class ScriptedFacilitator implements FacilitatorClient {
  verifyAnswer: () => Promise<VerifyResponse> = async () => ({ isValid: true });
  settleAnswer: () => Promise<SettleResponse> = async () => ({
    success: true,
    transaction: `0x${"ab".repeat(32)}`,
    network: NETWORK,
  });
  readonly verified: string[] = [];
  readonly settled: string[] = [];

  async verify(_payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    this.verified.push(requirements.amount);
    return this.verifyAnswer();
  }

  async settle(_payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const answer = await this.settleAnswer();
    if (answer.success) this.settled.push(requirements.amount);
    return answer;
  }

  async getSupported() {
    return {
      kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK as `${string}:${string}` }],
      extensions: [],
      signers: {},
    };
  }
}

export type PaidHttpServer = { url: string; close(): Promise<void> };

function adapterFor(req: IncomingMessage, url: URL): HTTPAdapter {
  const header = (name: string) => {
    const value = req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    getHeader: header,
    getMethod: () => req.method ?? "GET",
    getPath: () => url.pathname,
    getUrl: () => url.toString(),
    getAcceptHeader: () => header("accept") ?? "",
    getUserAgent: () => header("user-agent") ?? "",
  };
}

function write(res: ServerResponse, instructions: HTTPResponseInstructions): void {
  const body = instructions.body;
  res.writeHead(instructions.status, instructions.headers);
  res.end(typeof body === "string" ? body : JSON.stringify(body ?? {}));
}

/**
 * `configure` registers extensions and hooks on the resource server before it initializes.
 * Paths under `/failing` answer 500 from their handler, which cancels the verified payment instead of settling.
 */
export async function startPaidHttpServer(
  routes: RoutesConfig,
  facilitator: ScriptedFacilitator,
  configure: (server: x402ResourceServer) => void,
  paywall?: PaywallProvider,
): Promise<PaidHttpServer> {
  const resourceServer = new HumanProofResourceServer(facilitator).register(NETWORK, new ExactEvmScheme());
  configure(resourceServer);
  const httpServer = new x402HTTPResourceServer(resourceServer, routes);
  if (paywall) httpServer.registerPaywallProvider(paywall);
  await httpServer.initialize();

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    const adapter = adapterFor(req, url);
    const context = { adapter, path: url.pathname, method: adapter.getMethod() };
    const result = await httpServer.processHTTPRequest(context);
    if (result.type === "payment-error") return write(res, result.response);
    if (result.type === "no-payment-required")
      return write(res, { status: 200, headers: {}, body: { free: true } });
    if (url.pathname.startsWith("/failing")) {
      await result.cancellationDispatcher.cancel({ reason: "handler_failed", responseStatus: 500 });
      return write(res, { status: 500, headers: {}, body: { error: "handler failed" } });
    }
    const settlement = await httpServer.processSettlement(
      result.paymentPayload,
      result.paymentRequirements,
      result.declaredExtensions,
      { request: context },
    );
    if (!settlement.success) return write(res, settlement.response);
    write(res, {
      status: 200,
      headers: settlement.headers,
      body: { paid: result.paymentRequirements.amount },
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
