import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { it } from 'vitest';
import { ensureReceiverTable } from '../../functions/receiver/reference/table';
import { engineClients, uniquePrefix } from '../support/engines';
const clients = engineClients();
const run = async (mode: 'tx' | 'put', withRead: boolean) => {
  const TableName = `${uniquePrefix()}probe`;
  await ensureReceiverTable(clients.dynamoDb, TableName);
  let ok = 0; const errs: Record<string, number> = {};
  const ids = Array.from({ length: 20 }, (_, i) => `e${i}-${Math.random()}`);
  await Promise.all(ids.flatMap((id) => [0, 1, 2].map(async () => {
    if (withRead) { const g = await clients.documents.send(new GetCommand({ TableName, Key: { event_id: id }, ConsistentRead: true })); if (g.Item) return; }
    const Item = { event_id: id, status: 'processed', expires_at: 2e9 };
    const cond = { ConditionExpression: 'attribute_not_exists(event_id) OR expires_at < :now', ExpressionAttributeValues: { ':now': 1e9 } };
    try {
      if (mode === 'tx') await clients.documents.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item, ...cond } }] }));
      else await clients.documents.send(new PutCommand({ TableName, Item, ...cond }));
      ok++;
    } catch (e) { const k = (e as Error).name; errs[k] = (errs[k] ?? 0) + 1; }
  })));
  console.log('RAW', mode, withRead, 'ok', ok, JSON.stringify(errs));
};
it('probe', async () => {
  for (let i = 0; i < 4; i++) { await run('tx', true); await run('tx', false); await run('put', true); await run('put', false); }
}, 120000);
