export { FastifyHTTPAdapter, pathOf, publicUrlOf } from "./adapter.ts";
export { createEvmFacilitatorClient, type EvmFacilitatorOptions } from "./evm-facilitator.ts";
export { type FacilitatorRoutesOptions, facilitatorRoutes } from "./facilitator-routes.ts";
export { buildFacilitatorServer, type FacilitatorServerOptions } from "./facilitator-server.ts";
export {
  createInProcessFacilitatorClient,
  createMockFacilitatorClient,
  type MockFacilitatorOptions,
  payerOf,
} from "./facilitators.ts";
export {
  currentPaymentRequest,
  fastifyRequestOf,
  installPaymentGate,
  type PaymentGateObserver,
  type PaymentGateOptions,
  type PaymentOutcome,
  SETTLEMENT_FAILED,
  type VerifiedPayment,
  withoutSecrets,
} from "./payment-gate.ts";
