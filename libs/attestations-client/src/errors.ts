/**
 * The attestations API could not be read: an error status, a timeout, a network failure or a body that does not
 * have the shape of spec 2. It means "cannot tell now", never "not registered".
 */
export class AttestationsApiError extends Error {
  /** HTTP status when the API answered with an error status. */
  readonly status: number | undefined;
  /** False when the API could not be reached or did not answer in time. */
  readonly answered: boolean;

  constructor(message: string, options: { status?: number; answered?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "AttestationsApiError";
    this.status = options.status;
    this.answered = options.answered ?? true;
  }
}
