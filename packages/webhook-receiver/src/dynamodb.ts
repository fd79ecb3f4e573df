/**
 * `@pricing-service/webhook-receiver/dynamodb`: apply each event's effect exactly once, in the same DynamoDB
 * transaction as its seen mark (or under a lock for effects outside DynamoDB). Needs `@aws-sdk/lib-dynamodb`
 * (a peer dependency) and a table of the shape `RECEIVER_TABLE`.
 */
export * from '../../../functions/receiver/process-once';
export * from '../../../functions/receiver/table';
