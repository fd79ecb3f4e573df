/**
 * IAM for the local stack's DynamoDB calls: a function's call is refused, as AWS would refuse it, unless its
 * declaration (`FUNCTION_ACCESS`, from which the CDK grants its role) allows that action on that table, or a
 * query of that index. Locally nothing else enforces the grants, so without this a code path that needs an action
 * its function was never granted works here and fails only once deployed.
 *
 * The calling function is known from the invocation (`asFunction`, used by the local function pool). Calls made
 * outside any function (the stack's own start-up, tests that drive the stores directly) are not checked.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  FUNCTION_ACCESS,
  type FunctionId,
  type ServiceTableId,
  type TableItemAction,
} from '../../definitions';

const invoking = new AsyncLocalStorage<FunctionId>();

/** Runs `work` as `functionId`: the DynamoDB calls it makes, however deep, are checked against its grants. */
export const asFunction = <T>(functionId: FunctionId, work: () => T): T => invoking.run(functionId, work);

/** What AWS answers a call its role does not allow (the SDK's `AccessDeniedException`, HTTP 400). */
export class LocalAccessDeniedError extends Error {
  readonly $fault = 'client';
  readonly $metadata = { httpStatusCode: 400 };

  constructor(functionId: FunctionId, action: string, resource: string) {
    super(
      `User: pricing-local-${functionId} is not authorized to perform: dynamodb:${action} on resource: ${resource} ` +
        'because no identity-based policy allows it (declare it in functions/definitions/access.ts)',
    );
    this.name = 'AccessDeniedException';
  }
}

/** The action each kind of transaction item needs. */
const TRANSACT_ACTIONS: Readonly<Record<string, TableItemAction>> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

/** The item actions and index queries one call needs: `[action, table name, index name?]`. */
const needs = (operation: string, input: Record<string, unknown>): [TableItemAction, string, string?][] => {
  const table = typeof input.TableName === 'string' ? input.TableName : undefined;
  const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
  switch (operation) {
    case 'GetItem':
    case 'PutItem':
    case 'UpdateItem':
    case 'DeleteItem':
    case 'Query':
    case 'Scan':
      return table
        ? [[operation, table, ...(index ? [index] : [])] as [TableItemAction, string, string?]]
        : [];
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys((input.RequestItems as Record<string, unknown> | undefined) ?? {}).map((name) => [
        operation,
        name,
      ]);
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return (
        (input.TransactItems as Record<string, { TableName?: string } | undefined>[] | undefined) ?? []
      ).flatMap((item): [TableItemAction, string][] => {
        const [kind, body] = Object.entries(item).find(([, value]) => value !== undefined) ?? [];
        const action = kind === undefined ? undefined : TRANSACT_ACTIONS[kind];
        return action && body?.TableName ? [[action, body.TableName]] : [];
      });
    default:
      // Not an item action (DescribeTable, TTL, streams): granted and checked elsewhere.
      return [];
  }
};

/**
 * Refuses, in the client itself, every item call of a function that its declaration does not allow: the action
 * on the table, and a query of an index only when the index is declared (the CDK grants `Query` on exactly those).
 * `tableIdOf` names the service's tables by their physical names; a table that is not the service's is not checked.
 */
export const enforceFunctionGrants = (
  client: DynamoDBClient,
  tableIdOf: (tableName: string) => ServiceTableId | undefined,
): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const functionId = invoking.getStore();
      if (functionId !== undefined) {
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        for (const [action, tableName, index] of needs(operation, args.input as Record<string, unknown>)) {
          const tableId = tableIdOf(tableName);
          if (tableId === undefined) continue;
          const grant = FUNCTION_ACCESS[functionId].tables[tableId];
          const allowed =
            index === undefined
              ? (grant?.actions ?? []).includes(action)
              : action === 'Query' && ((grant?.indexes ?? []) as readonly string[]).includes(index);
          if (!allowed)
            throw new LocalAccessDeniedError(
              functionId,
              action,
              `table/${tableId}${index === undefined ? '' : `/index/${index}`}`,
            );
        }
      }
      return next(args);
    },
    { step: 'initialize', priority: 'high', name: 'localIamGuard' },
  );
};
