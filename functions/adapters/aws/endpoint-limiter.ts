import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { emissionIntervalMs, type LimiterState, planAdmission } from '../../domain/webhooks/throttle';
import type { Admission, AdmissionRequest, EndpointLimiter } from '../../ports/webhooks';
import { conditionalFailure } from './dynamo-errors';

/** Conditional writes tried before a contended admission waits a second instead (slots race, the rate does not). */
const MAX_WRITES = 8;
/** An idle endpoint's limiter item expires this long after its last use (TTL). */
const IDLE_EXPIRY_SECONDS = 86_400;

/**
 * Refreshed on every write, a day after the later of now and the arrival time written: a reservation far ahead
 * (a slow rate with a long backlog) keeps the item until a day after it.
 */
const expiresAt = (nowMs: number, tatMs = nowMs): number =>
  Math.floor(Math.max(nowMs, tatMs) / 1000) + IDLE_EXPIRY_SECONDS;

interface LimiterItem {
  readonly tat?: number;
  readonly [slot: `s${number}`]: number | undefined;
}

const stateOf = (item: Record<string, unknown> | undefined): LimiterState => {
  const slots: Record<number, number> = {};
  for (const [name, value] of Object.entries(item ?? {})) {
    const match = /^s(\d+)$/.exec(name);
    if (match && typeof value === 'number') slots[Number(match[1])] = value;
  }
  const tat = (item as LimiterItem | undefined)?.tat;
  return { ...(typeof tat === 'number' ? { tatMs: tat } : {}), slots };
};

/**
 * The endpoint limiter in DynamoDB (table `endpoint-limits`): one item per endpoint holding the GCRA's
 * theoretical arrival time (`tat`, epoch ms) and the held in-flight slots (`s0`, `s1`…: each its lease end, epoch
 * ms). Every deliver instance reads and writes the same item, so the limits hold across instances: a decision is
 * written only if the state it was made from is still there (a condition on `tat` and on the chosen slot being
 * free), else it is made again from the state the failed write returns (`ReturnValuesOnConditionCheckFailure`),
 * with no extra read. The first write assumes an idle endpoint (the common case costs one write).
 */
export class DynamoEndpointLimiter implements EndpointLimiter {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly random: () => number = Math.random,
  ) {}

  async admit(endpointId: string, request: AdmissionRequest): Promise<Admission> {
    const { limits, nowMs } = request;
    // Assume an idle endpoint first: no TAT ahead of now, slot 0 free.
    let state: LimiterState = { slots: {} };
    for (let write = 0; write < MAX_WRITES; write += 1) {
      const plan = planAdmission({
        state,
        limits,
        nowMs,
        ticket: request.ticket,
        deferrals: request.deferrals,
        // Concurrent admissions start their search at random slots, so they rarely race for one.
        ...(limits.maxInFlight !== undefined
          ? { firstSlot: Math.floor(this.random() * limits.maxInFlight) }
          : {}),
      });
      if (plan.kind === 'wait') return plan;
      if (plan.kind === 'reserve') {
        if (limits.perSecond === undefined) throw new Error('a reservation without a rate');
        return {
          kind: 'reserved',
          startMs: await this.reserve(endpointId, emissionIntervalMs(limits.perSecond), nowMs, plan.tatMs),
        };
      }
      const slot = plan.slot;
      // A ticket (the rate counted already) and no cap: nothing to hold.
      if (plan.tatMs === undefined && slot === undefined) return { kind: 'admitted' };
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ':expires': expiresAt(nowMs, plan.tatMs), ':now': nowMs };
      const sets = ['expires_at = :expires'];
      const conditions: string[] = [];
      if (plan.tatMs !== undefined) {
        // The rate is idle (the TAT is not ahead of now), so the next TAT is now + one interval whatever it was.
        sets.push('tat = :tat');
        values[':tat'] = plan.tatMs;
        conditions.push('(attribute_not_exists(tat) OR tat <= :now)');
      }
      const leaseUntilMs = nowMs + request.leaseMs;
      if (slot !== undefined) {
        names['#slot'] = `s${slot}`;
        sets.push('#slot = :lease');
        values[':lease'] = leaseUntilMs;
        conditions.push('(attribute_not_exists(#slot) OR #slot <= :now)');
      }
      try {
        await this.documents.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { endpoint_id: endpointId },
            UpdateExpression: `SET ${sets.join(', ')}`,
            ...(conditions.length > 0 ? { ConditionExpression: conditions.join(' AND ') } : {}),
            ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: values,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
      } catch (error) {
        if (conditionalFailure(error) !== 'condition') throw error;
        // Another instance came first (the rate got busy, or the slot was taken): decide again from the state
        // it left. (The document client does not translate an error's item: it comes as attribute values.)
        const item = (error as { Item?: Record<string, AttributeValue> }).Item;
        state = stateOf(item ? unmarshall(item) : undefined);
        continue;
      }
      return { kind: 'admitted', ...(slot !== undefined ? { slot, leaseUntilMs } : {}) };
    }
    return { kind: 'wait', waitSeconds: 1 };
  }

  /**
   * Reserves the next start of a busy rate: the TAT only grows and was ahead of now when read, so adding one
   * interval atomically (no condition to race on) gives each caller its own start, the TAT before its add.
   */
  private async reserve(
    endpointId: string,
    intervalMs: number,
    nowMs: number,
    /** The arrival time this reservation is expected to write (concurrent ones add a few intervals more). */
    expectedTatMs: number,
  ): Promise<number> {
    const result = await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { endpoint_id: endpointId },
        UpdateExpression: 'SET tat = tat + :interval, expires_at = :expires',
        ConditionExpression: 'tat > :now',
        ExpressionAttributeValues: {
          ':interval': intervalMs,
          ':now': nowMs,
          ':expires': expiresAt(nowMs, expectedTatMs),
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const tat = result.Attributes?.tat;
    if (typeof tat !== 'number') throw new Error('the limiter returned no arrival time');
    return tat - intervalMs;
  }

  async release(endpointId: string, slot: number, leaseUntilMs: number): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { endpoint_id: endpointId },
          UpdateExpression: 'REMOVE #slot',
          // Only the holder's own lease: a slot that expired and was taken by another attempt stays held.
          ConditionExpression: '#slot = :lease',
          ExpressionAttributeNames: { '#slot': `s${slot}` },
          ExpressionAttributeValues: { ':lease': leaseUntilMs },
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }
}
