import { type VerificationFailure, WebhookVerificationError } from '../../functions/receiver/verify';

/** The receiver kit's refusal code of `run`, or undefined when it verifies; any other error is thrown on. */
export const verificationFailureOf = (run: () => unknown): VerificationFailure | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
};
