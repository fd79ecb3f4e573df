/**
 * Partner callbacks (spec, "Endpoints a receiver serves": a receiver that calls back, e.g. to confirm a payout,
 * sends an `Idempotency-Key`, and the outcome happens once): `POST /partner/confirmations` records what the
 * partner did with an event it received, on the delivery record of (event, the partner's endpoint), with one
 * conditional write. Endpoints that registered a DPoP key (RFC 9449) must prove possession of it on every
 * callback.
 */
import { createHash } from 'node:crypto';
import {
  checkDpopProof,
  credentialHash,
  type DpopRefusal,
  dpopAlgorithms,
  jwkThumbprint,
  requestTargetUri,
  singleDpopProof,
} from '../../domain/webhooks/dpop';
import type {
  ConfirmationOutcome,
  ConfirmationRecord,
  DpopProofVerifier,
  DpopReplayCache,
  EndpointRecord,
} from '../../ports/webhooks';
import type { ConfirmEventRequest } from '../../schemas/webhooks';
import type { WebhookContext } from './context';

/** A confirmation as the partner sees it (the 201 body, and `confirmation` in a 409). */
export interface ConfirmationView {
  readonly event_id: string;
  readonly endpoint_id: string;
  readonly outcome: ConfirmationOutcome;
  readonly reference: string;
  readonly confirmed_at: string;
}

/** The partner's endpoint has no delivery of this event (never fanned out to it, or its history expired). */
export class ConfirmationNotFoundError extends Error {
  constructor(eventId: string) {
    super(`no event ${eventId} was delivered to this partner`);
    this.name = 'ConfirmationNotFoundError';
  }
}

/** The event was confirmed already by another request (another Idempotency-Key): the first one stands. */
export class ConfirmationConflictError extends Error {
  constructor(readonly confirmation: ConfirmationView) {
    super('this event was already confirmed by another request; the first confirmation stands');
    this.name = 'ConfirmationConflictError';
  }
}

/** The same Idempotency-Key confirmed this event with another outcome or reference. */
export class ConfirmationKeyReusedError extends Error {
  constructor() {
    super('this Idempotency-Key already confirmed this event with another outcome or reference');
    this.name = 'ConfirmationKeyReusedError';
  }
}

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

const viewOf = (eventId: string, endpointId: string, record: ConfirmationRecord): ConfirmationView => ({
  event_id: eventId,
  endpoint_id: endpointId,
  outcome: record.outcome,
  reference: record.reference,
  confirmed_at: record.confirmed_at,
});

/**
 * Records the confirmation once. The first request to write it wins; a request carrying the same
 * Idempotency-Key and the same outcome and reference finds the same answer (also after the idempotency
 * record expired); another key answers `ConfirmationConflictError` with the confirmation that stands.
 */
export const confirmEvent = async (
  ctx: Pick<WebhookContext, 'clock' | 'deliveries'>,
  endpoint: EndpointRecord,
  request: ConfirmEventRequest,
  idempotencyKey: string,
): Promise<ConfirmationView> => {
  const keyHash = sha256Hex(idempotencyKey);
  const result = await ctx.deliveries.confirm(request.event_id, endpoint.endpoint_id, {
    outcome: request.outcome,
    reference: request.reference,
    confirmed_at: ctx.clock.now().toISOString(),
    idempotency_key_sha256: keyHash,
  });
  if (result.status === 'missing') throw new ConfirmationNotFoundError(request.event_id);
  const view = viewOf(request.event_id, endpoint.endpoint_id, result.confirmation);
  if (result.status === 'confirmed') return view;
  const stored = result.confirmation;
  if (stored.idempotency_key_sha256 !== keyHash) throw new ConfirmationConflictError(view);
  if (stored.outcome !== request.outcome || stored.reference !== request.reference) {
    throw new ConfirmationKeyReusedError();
  }
  return view;
};

/** A refused DPoP proof, with the algorithms the endpoint's key accepts (for `WWW-Authenticate`). */
export class DpopRefusedError extends Error {
  constructor(
    readonly refusal: DpopRefusal,
    readonly algorithms: readonly string[],
  ) {
    super(`DPoP proof refused: ${refusal}`);
    this.name = 'DpopRefusedError';
  }
}

/** What DPoP checks need besides the endpoint: the JWS verifier, the `jti` cache, time and the window. */
export interface DpopContext extends Pick<WebhookContext, 'clock' | 'settings'> {
  readonly dpop: DpopProofVerifier;
  readonly dpopReplays: DpopReplayCache;
}

/** The parts of a partner's HTTP request a DPoP proof is bound to. */
export interface PartnerRequest {
  readonly method: string;
  /** The target URI's parts as the client addressed it (see the handler for how they are derived). */
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly path: string;
  /** Every `DPoP` header value the request carries. */
  readonly dpopProofs: readonly string[];
  /** The partner key presented (`Authorization: Bearer`), for the optional `ath` claim. */
  readonly partnerKey: string;
}

/**
 * Enforces the endpoint's DPoP key on a partner callback, or does nothing when it registered none: exactly one
 * proof, its signature (adapter), its header and claims against this request and the clock (domain), then its
 * `jti` claimed in the replay cache until the proof could no longer be accepted. Throws `DpopRefusedError`.
 */
export const requireDpop = async (
  ctx: DpopContext,
  endpoint: EndpointRecord,
  request: PartnerRequest,
): Promise<void> => {
  const jwk = endpoint.dpop_jwk;
  if (!jwk) return;
  const algorithms = dpopAlgorithms(jwk);
  const refused = (refusal: DpopRefusal) => new DpopRefusedError(refusal, algorithms);
  const single = singleDpopProof(request.dpopProofs);
  if ('refusal' in single) throw refused(single.refusal);
  const targetUri = requestTargetUri(request);
  if (targetUri === undefined) throw refused('htu');
  const verified = await ctx.dpop.verify(single.proof, algorithms);
  if (!verified.ok) throw refused(verified.refusal);
  const now = ctx.clock.now();
  const keyThumbprint = jwkThumbprint(jwk);
  const check = checkDpopProof(verified, {
    keyThumbprint,
    algorithms,
    method: request.method,
    targetUri,
    credentialHash: credentialHash(request.partnerKey),
    now,
    windowSeconds: ctx.settings.dpopProofWindowSeconds,
  });
  if (!check.ok) throw refused(check.refusal);
  if (!(await ctx.dpopReplays.remember(keyThumbprint, check.jti, check.acceptableUntil, now))) {
    throw refused('replayed');
  }
};
