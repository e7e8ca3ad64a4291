export { FastifyHTTPAdapter, pathOf, publicUrlOf } from "./adapter";
export { createEvmFacilitatorClient, type EvmFacilitatorOptions } from "./evm-facilitator";
export { facilitatorRoutes } from "./facilitator-routes";
export {
  createInProcessFacilitatorClient,
  createMockFacilitatorClient,
  type MockFacilitatorOptions,
  payerOf,
} from "./facilitators";
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
} from "./payment-gate";
