import { timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../../domain/errors';
import { allocate } from '../../domain/money/allocation';
import type { Json } from '../../domain/money/canonical';
import { formatMinor, minorUnitsOf, toMinor } from '../../domain/money/currency';
import { dec, ZERO } from '../../domain/money/decimal';
import { roundBankers } from '../../domain/money/rounding';
import { explainBasket, priceBasket } from '../../domain/pricing/basket';
import { PricingError } from '../../domain/pricing/errors';
import type { Explanation } from '../../domain/pricing/explain';
import { FxTable, fxTableOf } from '../../domain/pricing/fx';
import { checkQuantityRules } from '../../domain/pricing/quantity';
import type { BasketPricing, BasketRequest, PricedLine } from '../../domain/pricing/types';
import { canonicalBytes, type JsonObject, quoteDigest, receiptHash } from '../../domain/receipts/receipt';
import type { CheckoutRepository, StoredReceipt } from '../../ports/checkout';
import type { Clock } from '../../ports/clock';
import type { ExactlyOnce } from '../../ports/idempotency';
import type { ServiceMetrics } from '../../ports/metrics';
import type { MacSigner, ReceiptSigner } from '../../ports/signing';
import { LOCK_TTL_SECONDS, type QuoteRequest } from '../../schemas/checkout';
import { CONFLICT, type RetryPolicy, retryOnConflict } from '../../shared/retry';
import type { CatalogReader } from '../catalog/reader';
import { type CatalogRelease, feeScheduleAt, repriceReceipt, toPricingCatalog } from '../catalog/release';
import { commitOutcomeOf } from '../objectives/commit-outcome';
import { quoteRateFreshness } from '../rates/freshness';

/** Quotes stay readable this long after their lock ends, so a late commit can still be answered. */
export const QUOTE_RETENTION_AFTER_LOCK_SECONDS = 24 * 3600;

/** A receipt as read: the signed receipt with its lifecycle (status, refunds), which `issuedReceiptOf` undoes. */
const receiptRead = (stored: StoredReceipt): JsonObject => ({
  ...stored.receipt,
  status: stored.status,
  refunds: asJson(stored.refunds),
});

export class CheckoutError extends ServiceError {
  declare readonly code: 'not_found' | 'quote_expired' | 'invalid_signature' | 'invalid_state';
  declare readonly details: Readonly<Record<string, Json>>;

  constructor(
    code: 'not_found' | 'quote_expired' | 'invalid_signature' | 'invalid_state',
    message: string,
    details: Readonly<Record<string, Json>> = {},
  ) {
    super(code, message, { details });
    this.name = 'CheckoutError';
  }
}

export interface CheckoutDependencies {
  readonly reader: CatalogReader;
  readonly repository: CheckoutRepository;
  readonly mac: MacSigner;
  readonly signer: ReceiptSigner;
  readonly clock: Clock;
  readonly newId: (prefix: 'q' | 'rcpt' | 'rfd') => string;
  /** Rule 18's measurements: each receipt issued against its quote, each commit refused for an ended lock. */
  readonly metrics?: Pick<ServiceMetrics, 'commitIssued' | 'commitRefusedExpired'>;
}

/** A refund that lost a race for the receipt re-reads it and tries again: 5 attempts, 5 ms doubling. */
const REFUND_RETRY: RetryPolicy = { attempts: 5, baseMs: 5, capMs: 80 };

const asJson = <T>(value: T): Json => value as unknown as Json;

/** The basket a quote records (and a commit, a refund or a receipt check prices again): no lock, no explain. */
const basketOf = (request: QuoteRequest): BasketRequest => {
  const { lock_ttl: _lockTtl, explain: _explain, ...basket } = request;
  return basket;
};

/** The quote's MAC (C9): `v1=` + base64 of HMAC-SHA-256 over SHA-256 of the JCS bytes of the quote. */
const macOf = async (mac: MacSigner, payload: JsonObject): Promise<string> =>
  `v1=${Buffer.from(await mac.generateMac(quoteDigest(payload))).toString('base64')}`;

const pricingFields = (pricing: BasketPricing): JsonObject => {
  const { versions, ...rest } = pricing;
  return { ...(asJson(rest) as JsonObject), ...(asJson(versions) as JsonObject) };
};

/** Rule 14: the settlement amount in the base currency at the merchant bank rate, and the spread to the market. */
const settlementOf = (
  release: CatalogRelease,
  pricing: BasketPricing,
  baseCurrency: string,
  quotedAt: Date,
): JsonObject => {
  const baseUnits = minorUnitsOf(baseCurrency);
  const total = dec(pricing.total);
  const market = publishedRates(release, quotedAt).rate(pricing.currency, baseCurrency);
  const settlementRates = release.fx.content.settlement_rates ?? [];
  let settlementRate = market;
  let source = 'published';
  if (settlementRates.length > 0 && pricing.currency !== baseCurrency) {
    try {
      settlementRate = new FxTable({
        fx_version: 'settlement',
        base_currency: baseCurrency,
        rates: settlementRates.map((rate) => ({ ...rate, effective_from: '', version: 'settlement' })),
      }).rate(pricing.currency, baseCurrency);
      source = 'merchant_bank';
    } catch {
      // No settlement rate for this currency: settle at the published rate.
    }
  }
  const settled = roundBankers(total.times(settlementRate), baseUnits);
  const atMarket = roundBankers(total.times(market), baseUnits);
  return {
    currency: baseCurrency,
    rate: settlementRate.toString(),
    source,
    amount: settled.toFixed(baseUnits),
    market_rate: market.toString(),
    spread: atMarket.minus(settled).toFixed(baseUnits),
  };
};

/** The published rates of a release (what `fx_version` pins) as of `at`: an FX override then in force counts. */
const publishedRates = (release: CatalogRelease, at: Date) =>
  fxTableOf(toPricingCatalog(release, { at: new Date(0) }).fx, at.toISOString());

/** The tenant a quote or receipt was made for: its basket's, which the caller key set (C26). */
const tenantOf = (document: JsonObject): string | undefined => {
  const basket = document.basket as JsonObject | undefined;
  return typeof basket?.tenant === 'string' ? basket.tenant : undefined;
};

/**
 * Quotes, commits and refunds (spec rules 11, 13, 14, 18; C8–C10). Every call names the caller key's tenant: a
 * quote is made for it, and only its own quotes and receipts are found.
 */
export class Checkout {
  constructor(private readonly deps: CheckoutDependencies) {}

  /** Prices the basket on the release in force (read fresh), locks the rate for `lock_ttl` and signs it. */
  async quote(request: QuoteRequest, traceId: string): Promise<JsonObject> {
    const now = this.deps.clock.now();
    const { release } = await this.deps.reader.current({ fresh: true });
    const basket = basketOf(request);
    const catalog = toPricingCatalog(release, {
      ...(basket.tenant ? { tenant: basket.tenant } : {}),
      at: now,
    });
    const options = { at: now.toISOString() };
    checkQuantityRules(catalog.products, basket.items);
    let pricing: BasketPricing;
    let explain: Explanation | undefined;
    if (request.explain) ({ pricing, explain } = explainBasket(catalog, basket, options));
    else pricing = priceBasket(catalog, basket, options);
    // Rule 10: a rate past its maximum age is refused; a stale one is used and the quote says so.
    const freshness = quoteRateFreshness(release, basket.currency, now);
    if (freshness?.refuse) {
      throw new PricingError(
        'currency_not_available',
        'stale_rate',
        `the ${freshness.pair} rate is ${freshness.age_seconds} s old, beyond its maximum age of ` +
          `${freshness.max_age_seconds} s: quotes in ${basket.currency} resume when a fresh rate is published`,
      );
    }
    const lockTtl = request.lock_ttl ?? LOCK_TTL_SECONDS.default;
    const expiresAt = new Date(now.getTime() + lockTtl * 1000);
    const payload: JsonObject = {
      quote_id: this.deps.newId('q'),
      status: 'open',
      issued_at: now.toISOString(),
      lock_ttl: lockTtl,
      expires_at: expiresAt.toISOString(),
      trace_id: traceId,
      basket: asJson(basket),
      ...pricingFields(pricing),
      fx_stale: freshness?.stale ?? false,
      ...(freshness ? { fx_age_seconds: freshness.age_seconds } : {}),
    };
    const signature = await macOf(this.deps.mac, payload);
    await this.deps.repository.saveQuote({
      quote_id: payload.quote_id as string,
      payload,
      signature,
      expires_at: Math.floor(expiresAt.getTime() / 1000) + QUOTE_RETENTION_AFTER_LOCK_SECONDS,
    });
    // C28: the explanation goes with the answer only; it is neither signed nor stored with the quote.
    return { ...payload, signature, ...(explain ? { explain: asJson(explain) } : {}) };
  }

  /** A stored receipt, or not found. */
  private async storedReceipt(receiptId: string): Promise<StoredReceipt> {
    const stored = await this.deps.repository.receipt(receiptId);
    if (!stored) throw new CheckoutError('not_found', `no receipt ${receiptId}`);
    return stored;
  }

  private async receiptOf(receiptId: string): Promise<JsonObject> {
    return (await this.storedReceipt(receiptId)).receipt;
  }

  /** A receipt of `tenant` (C26): another tenant's is answered as if it did not exist. */
  private async tenantReceipt(receiptId: string, tenant: string): Promise<StoredReceipt> {
    const stored = await this.storedReceipt(receiptId);
    if (tenantOf(stored.receipt) !== tenant) throw new CheckoutError('not_found', `no receipt ${receiptId}`);
    return stored;
  }

  /**
   * Turns a quote into a signed receipt. In this order: a quote that already has a receipt gets that receipt;
   * an expired lock is refused with a fresh quote to confirm (`requote`); a signature that does not match is
   * refused. One quote gives one receipt, ever, however many commits race.
   */
  async commit(
    quoteId: string,
    signature: string,
    traceId: string,
    tenant: string,
    once?: ExactlyOnce<JsonObject>,
  ): Promise<JsonObject> {
    const stored = await this.deps.repository.quote(quoteId);
    // Another tenant's quote is answered as if it did not exist (C26).
    if (!stored || tenantOf(stored.payload) !== tenant)
      throw new CheckoutError('not_found', `no quote ${quoteId}`);
    const payload = stored.payload;
    // The signature first, before any other answer: without it nobody learns whether the quote was committed
    // (nor gets its receipt) or is asked to confirm a requote.
    const given = Buffer.from(signature);
    const expected = Buffer.from(await macOf(this.deps.mac, payload));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new CheckoutError('invalid_signature', 'the signature does not match the quote');
    }
    if (stored.receipt_id) return this.receiptOf(stored.receipt_id);
    const now = this.deps.clock.now();
    if (now.getTime() >= new Date(String(payload.expires_at)).getTime()) {
      this.deps.metrics?.commitRefusedExpired();
      const basket = payload.basket as unknown as BasketRequest;
      const requote = await this.quote(
        { ...basket, lock_ttl: Number(payload.lock_ttl) } as QuoteRequest,
        traceId,
      );
      throw new CheckoutError('quote_expired', `the rate lock of ${quoteId} ended; confirm the new price`, {
        requote,
      });
    }
    const release = await this.deps.reader.release({
      commercial: Number(payload.pricelist_version),
      fx: Number(String(payload.fx_version).replace('fx-', '')),
      tax: Number(payload.tax_rule_version),
    });
    const pricing = payload as unknown as BasketPricing & JsonObject;
    const baseCurrency = release.commercial.content.pricelists[0]?.base_currency ?? pricing.currency;
    const receiptPayload: JsonObject = {
      receipt_id: this.deps.newId('rcpt'),
      quote_id: quoteId,
      status: 'issued',
      issued_at: now.toISOString(),
      trace_id: traceId,
      key_id: this.deps.signer.keyId,
      pricelist_version: payload.pricelist_version as Json,
      fx_version: payload.fx_version as Json,
      tax_rule_version: payload.tax_rule_version as Json,
      computed_totals: {
        currency: pricing.currency,
        subtotal: pricing.subtotal,
        discounts: pricing.discounts,
        taxes: asJson(pricing.taxes),
        fees: asJson(pricing.fees),
        total: pricing.total,
      },
      breakdown: {
        items_priced: asJson(pricing.items_priced),
        threshold_promotions: asJson(pricing.threshold_promotions),
        rounding_scope: pricing.rounding_scope,
        minor_units: pricing.minor_units,
        ...(pricing.fx_rate ? { fx_rate: pricing.fx_rate } : {}),
        ...(pricing.fx_conversions ? { fx_conversions: asJson(pricing.fx_conversions) } : {}),
      },
      basket: payload.basket as Json,
      settlement: settlementOf(release, pricing, baseCurrency, new Date(String(payload.issued_at))),
      quoted_at: payload.issued_at as Json,
      quote_signature: stored.signature,
    };
    const receipt = await this.signed(receiptPayload);
    const outcome = await this.deps.repository.commit(
      {
        receipt_id: receiptPayload.receipt_id as string,
        quote_id: quoteId,
        receipt,
        status: 'issued',
        refunds: [],
        revision: 0,
      },
      await once?.completion(receipt),
    );
    if (outcome === 'committed') {
      this.deps.metrics?.commitIssued(commitOutcomeOf(payload, receipt, now));
      return receipt;
    }
    const winner = await this.deps.repository.quote(quoteId);
    if (!winner?.receipt_id)
      throw new CheckoutError('invalid_state', `quote ${quoteId} could not be committed`);
    return this.receiptOf(winner.receipt_id);
  }

  /** The signed receipt with its lifecycle (status and refunds are not part of the signed payload). */
  async receipt(receiptId: string, tenant: string): Promise<JsonObject> {
    return receiptRead(await this.tenantReceipt(receiptId, tenant));
  }

  /**
   * A receipt of any tenant, for operators (`GET /admin/receipts/{id}`: support and the console's receipt view),
   * with its lifecycle as tenants see it.
   */
  async receiptForOperator(receiptId: string): Promise<JsonObject> {
    return receiptRead(await this.storedReceipt(receiptId));
  }

  /**
   * Rule 13: a return or chargeback, recalculated with the receipt's own versions (the basket is priced again
   * on them and must give the receipt's totals), a bundle position refunding exactly its stored share, the
   * refund fee from the schedule in force on the transaction date, and never more than was bought.
   */
  async refund(
    request: {
      receipt_id: string;
      kind: 'return' | 'chargeback';
      lines: readonly { sku_id: string; quantity: number }[];
    },
    tenant: string,
    once?: ExactlyOnce<JsonObject>,
  ): Promise<JsonObject> {
    return retryOnConflict(
      REFUND_RETRY,
      async () => {
        const stored = await this.tenantReceipt(request.receipt_id, tenant);
        if (stored.status === 'refunded' || stored.status === 'charged_back') {
          throw new CheckoutError(
            'invalid_state',
            `receipt ${request.receipt_id} is already ${stored.status}`,
          );
        }
        const receipt = stored.receipt;
        const issuedAt = new Date(String(receipt.issued_at));
        const release = await this.deps.reader.release({
          commercial: Number(receipt.pricelist_version),
          fx: Number(String(receipt.fx_version).replace('fx-', '')),
          tax: Number(receipt.tax_rule_version),
        });
        const recomputed = repriceReceipt(receipt, release);
        const totals = receipt.computed_totals as JsonObject;
        if (recomputed.total !== totals.total) {
          throw new CheckoutError('invalid_state', 'the receipt cannot be reproduced from its versions');
        }
        const minorUnits = recomputed.minor_units;
        const refundedUnits = new Map<string, bigint>();
        const refundedAmount = new Map<string, bigint>();
        for (const previous of stored.refunds) {
          for (const line of (previous.lines as JsonObject[]) ?? []) {
            const key = String(line.key);
            refundedUnits.set(key, (refundedUnits.get(key) ?? 0n) + BigInt(Number(line.quantity)));
            refundedAmount.set(
              key,
              (refundedAmount.get(key) ?? 0n) + toMinor(dec(String(line.amount)), minorUnits),
            );
          }
        }
        const refundLines: JsonObject[] = [];
        let amountUnits = 0n;
        for (const wanted of request.lines) {
          let left = BigInt(wanted.quantity);
          for (const candidate of refundableUnits(recomputed.items_priced, wanted.sku_id, minorUnits)) {
            if (left === 0n) break;
            const doneUnits = refundedUnits.get(candidate.key) ?? 0n;
            const available = candidate.units - doneUnits;
            if (available <= 0n) continue;
            const take = left < available ? left : available;
            const remainingAmount = candidate.amount - (refundedAmount.get(candidate.key) ?? 0n);
            const [share = 0n] = allocate(remainingAmount, [take, available - take]);
            refundLines.push({
              key: candidate.key,
              line: candidate.line,
              sku_id: wanted.sku_id,
              quantity: Number(take),
              amount: formatMinor(share, minorUnits),
            });
            refundedUnits.set(candidate.key, doneUnits + take);
            refundedAmount.set(candidate.key, (refundedAmount.get(candidate.key) ?? 0n) + share);
            amountUnits += share;
            left -= take;
          }
          if (left > 0n) {
            throw new CheckoutError(
              'invalid_state',
              `cannot refund ${wanted.quantity} × ${wanted.sku_id}: more than was bought`,
            );
          }
        }
        const feeUnits =
          request.kind === 'return' ? this.refundFee(release, issuedAt, amountUnits, recomputed) : 0n;
        const refund = await this.signed({
          refund_id: this.deps.newId('rfd'),
          receipt_id: request.receipt_id,
          kind: request.kind,
          lines: refundLines,
          currency: recomputed.currency,
          amount: formatMinor(amountUnits, minorUnits),
          fee: formatMinor(feeUnits, minorUnits),
          net: formatMinor(amountUnits - feeUnits, minorUnits),
          pricelist_version: receipt.pricelist_version as Json,
          fx_version: receipt.fx_version as Json,
          tax_rule_version: receipt.tax_rule_version as Json,
          created_at: this.deps.clock.now().toISOString(),
          key_id: this.deps.signer.keyId,
        });
        const everything = recomputed.items_priced.every((line) =>
          refundableUnits([line], line.sku_id, minorUnits).every(
            (candidate) => (refundedUnits.get(candidate.key) ?? 0n) >= candidate.units,
          ),
        );
        const status: StoredReceipt['status'] =
          request.kind === 'chargeback' ? 'charged_back' : everything ? 'refunded' : 'partially_refunded';
        const next: StoredReceipt = {
          ...stored,
          refunds: [...stored.refunds, refund],
          status,
          revision: stored.revision + 1,
        };
        // The refund and the request's answer are one write: a retry after a crash finds the answer, never records
        // the return a second time.
        const completion = await once?.completion(refund);
        return (await this.deps.repository.updateRefunds(next, stored.revision, completion)) === 'updated'
          ? refund
          : CONFLICT;
      },
      () => new CheckoutError('invalid_state', 'the receipt changed while refunding; retry'),
    );
  }

  /**
   * A signed document (C10): the payload with its `hash` and the signature over its JCS bytes. Receipts and
   * refunds (returns and chargebacks) are signed alike, so each file of the finance export verifies on its own.
   */
  private async signed(payload: JsonObject): Promise<JsonObject> {
    return {
      ...payload,
      hash: receiptHash(payload),
      signature: Buffer.from(await this.deps.signer.sign(canonicalBytes(payload))).toString('base64'),
    };
  }

  /** The refund fee of the schedule in force on the transaction date, never more than the refund. */
  private refundFee(
    release: CatalogRelease,
    issuedAt: Date,
    amountUnits: bigint,
    pricing: BasketPricing,
  ): bigint {
    const schedule = feeScheduleAt(release.commercial.content, issuedAt)?.refund;
    if (!schedule || amountUnits === 0n) return 0n;
    const amount = dec(formatMinor(amountUnits, pricing.minor_units));
    let fee = amount.times(dec(schedule.percent)).dividedBy(100);
    if (schedule.fixed) {
      const rate = publishedRates(release, issuedAt).rate(schedule.fixed.currency, pricing.currency);
      fee = fee.plus(dec(schedule.fixed.amount).times(rate));
    }
    const units = toMinor(
      roundBankers(fee.isNegative() ? ZERO : fee, pricing.minor_units),
      pricing.minor_units,
    );
    return units > amountUnits ? amountUnits : units;
  }
}

/** What can be refunded for a SKU: whole lines of it, or its positions inside bundles (their stored shares). */
const refundableUnits = (
  lines: readonly PricedLine[],
  skuId: string,
  minorUnits: number,
): { key: string; line: number; units: bigint; amount: bigint }[] => {
  const found: { key: string; line: number; units: bigint; amount: bigint }[] = [];
  for (const line of lines) {
    if (line.sku_id === skuId) {
      found.push({
        key: `${line.line}`,
        line: line.line,
        units: BigInt(line.quantity),
        amount: toMinor(dec(line.total), minorUnits),
      });
    }
    for (const position of line.bundle_allocation ?? []) {
      if (position.sku_id !== skuId) continue;
      found.push({
        key: `${line.line}:${position.sku_id}`,
        line: line.line,
        units: BigInt(position.quantity * line.quantity),
        amount: toMinor(dec(position.amount), minorUnits),
      });
    }
  }
  return found;
};
