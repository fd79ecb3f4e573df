import type { Json } from '../domain/money/canonical';
import type { RequestCompletion } from './idempotency';

/** A stored quote: the signed payload, its signature, and the receipt once committed. */
export interface StoredQuote {
  readonly quote_id: string;
  readonly payload: { readonly [key: string]: Json };
  readonly signature: string;
  readonly receipt_id?: string;
  /** Epoch seconds when the record may be deleted (lock expiry + 24 h). */
  readonly expires_at: number;
}

export interface StoredReceipt {
  readonly receipt_id: string;
  readonly quote_id: string;
  readonly receipt: { readonly [key: string]: Json };
  readonly status: 'issued' | 'partially_refunded' | 'refunded' | 'charged_back';
  readonly refunds: readonly { readonly [key: string]: Json }[];
  /** Optimistic concurrency for refunds. */
  readonly revision: number;
}

/** One page of the receipts table's items as stored (the export reads `receipt_json` and `refunds_json`). */
export interface ReceiptItemsPage {
  readonly items: readonly Readonly<Record<string, unknown>>[];
  /** Where the next page starts; absent on the last page. */
  readonly cursor?: string;
}

/** Every stored receipt, page by page: the finance export's backfill reads them all. */
export interface ReceiptItemSource {
  page(cursor: string | undefined, limit: number): Promise<ReceiptItemsPage>;
}

export interface CheckoutRepository {
  saveQuote(quote: StoredQuote): Promise<void>;
  quote(quoteId: string): Promise<StoredQuote | undefined>;
  /**
   * Stores the receipt and marks the quote committed in one transaction, only if the quote has no receipt yet.
   * `exists` means another commit won: read the quote again for its receipt.
   */
  commit(receipt: StoredReceipt, completion?: RequestCompletion): Promise<'committed' | 'exists'>;
  receipt(receiptId: string): Promise<StoredReceipt | undefined>;
  /**
   * Replaces the receipt's refunds and status if its revision is still `expectedRevision`; with the request's
   * completion in the same transaction when given (a refund is recorded once per Idempotency-Key).
   */
  updateRefunds(
    receipt: StoredReceipt,
    expectedRevision: number,
    completion?: RequestCompletion,
  ): Promise<'updated' | 'conflict'>;
}
