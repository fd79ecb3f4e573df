/**
 * A service platform over the test engines (DynamoDB Local and fauxqs, resources provisioned by the test), for
 * integration tests that compose the service's own repositories and queue the way the functions do. Members a
 * test has no engine for (keys, scheduler, metrics, usage plan) fail when reached, naming the member.
 */
import type { AwsClients } from '../../functions/adapters/aws/clients';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import type { ServicePlatform } from '../../functions/composition/service';
import { LOCAL_EGRESS } from '../../functions/composition/webhooks';
import { DEFAULT_RETRY_POLICY } from '../../functions/domain/webhooks/retry-policy';
import type { Clock } from '../../functions/ports/clock';
import { createLogger } from '../../functions/shared/logger';

const absent = (member: string) => (): never => {
  throw new Error(`the engine platform has no ${member}`);
};

export const enginePlatform = (
  clients: AwsClients,
  resources: ProvisionedResources,
  clock: Clock,
): ServicePlatform => ({
  env: {},
  clock,
  createLogger: (functionId) => createLogger({ serviceName: `pricing-${functionId}`, logLevel: 'SILENT' }),
  clients: () => clients,
  tableName: (id) => resources.tableNames[id],
  queueUrl: (id) => resources.queueUrls[id],
  bucketName: (id) => resources.bucketNames[id],
  receiptSigner: absent('receipt signer'),
  retiredReceiptKeys: () => [],
  quoteMac: absent('quote MAC key'),
  secretsCipher: absent('secrets key'),
  scheduler: absent('retry scheduler'),
  egress: () => LOCAL_EGRESS,
  cloudDestinations: absent('cloud destinations'),
  trustPrincipal: absent('trust principal'),
  retryPolicy: () => DEFAULT_RETRY_POLICY,
  rates: absent('rate sources'),
  metrics: absent('metrics'),
  operatorRoles: () => [],
  callerUsagePlan: absent('usage plan'),
});
