import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { newId } from '../shared/ids';
import { CatalogReader } from '../usecases/catalog/reader';
import { Checkout } from '../usecases/checkout/checkout';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import { idempotent, requireIdempotencyKey } from './middleware/idempotency';
import {
  commitOperation,
  getReceiptOperation,
  operatorReceiptOperation,
  quoteOperation,
  refundOperation,
} from './operations/checkout';

/** The `checkout` function: quotes, commits, receipts and refunds. Checkout paths always read fresh data. */
export const createCheckoutHandler = (deps: ServiceDependencies): HttpHandler => {
  const metrics = deps.metrics.recorder('checkout');
  const checkout = new Checkout({
    reader: new CatalogReader(deps.catalogRepository, deps.clock),
    repository: deps.checkoutRepository,
    mac: deps.quoteMac,
    signer: deps.receiptSigner,
    clock: deps.clock,
    newId: (prefix) => newId(prefix, deps.clock.now()),
    metrics,
  });
  // C8: every POST honours Idempotency-Key.
  const idempotency = deps.idempotency;
  return createHttpApi({
    functionId: 'checkout',
    // Operators read receipts of any tenant (GET /admin/receipts/{id}).
    operatorRoles: deps.operatorRoles,
    logger: deps.createLogger('checkout'),
    metrics,
    operations: {
      quote: idempotent(quoteOperation(checkout), idempotency),
      commit: idempotent(commitOperation(checkout), idempotency),
      // A refund moves money: its key is required, so a retry can never record a return twice.
      refund: requireIdempotencyKey(idempotent(refundOperation(checkout), idempotency)),
      getReceipt: getReceiptOperation(checkout),
      operatorReceipt: operatorReceiptOperation(checkout),
    },
  });
};

export const handler = lazyHandler(() => createCheckoutHandler(awsDependencies('checkout')));
