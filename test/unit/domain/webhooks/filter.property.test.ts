/**
 * Endpoint payload filters (C31): the evaluator agrees with a small reference evaluator written here from the
 * operators' definitions, on random filters and events; validation accepts every generated filter and names the
 * path of each problem in a bad one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type EventFilter,
  type FilterSubject,
  filterProblems,
  matchesFilter,
} from '../../../../functions/domain/webhooks/filter';

// ---------------------------------------------------------------------------------------------------------------
// The reference: each operator straight from its definition, values compared through a canonical JSON text.
// ---------------------------------------------------------------------------------------------------------------

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, member: unknown) =>
    member && typeof member === 'object' && !Array.isArray(member)
      ? Object.fromEntries(
          Object.entries(member as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : member,
  );

type Lookup = { found: true; value: unknown } | { found: false };

const lookup = (subject: FilterSubject, path: string): Lookup => {
  const segments = path.split('.');
  const root = segments.shift();
  let current: unknown =
    root === 'data' ? subject.data : (subject as unknown as Record<string, unknown>)[root ?? ''];
  if (current === undefined) return { found: false };
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return { found: false };
    if (!(segment in (current as object))) return { found: false };
    current = (current as Record<string, unknown>)[segment];
    if (current === undefined) return { found: false };
  }
  return { found: true, value: current };
};

const sameKind = (a: unknown, b: unknown) =>
  (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');

const reference = (filter: Record<string, unknown>, subject: FilterSubject): boolean => {
  for (const [key, spec] of Object.entries(filter)) {
    let ok: boolean;
    if (key === '$and') ok = (spec as Record<string, unknown>[]).every((f) => reference(f, subject));
    else if (key === '$or') ok = (spec as Record<string, unknown>[]).some((f) => reference(f, subject));
    else if (key === '$not') ok = !reference(spec as Record<string, unknown>, subject);
    else {
      const found = lookup(subject, key);
      const isOperators =
        spec !== null &&
        typeof spec === 'object' &&
        !Array.isArray(spec) &&
        Object.keys(spec).some((k) => k[0] === '$');
      const operators: [string, unknown][] = isOperators
        ? Object.entries(spec as Record<string, unknown>)
        : [['$eq', spec]];
      ok = operators.every(([operator, operand]) => {
        const equal = found.found && canonical(found.value) === canonical(operand);
        const inList =
          found.found && Array.isArray(operand)
            ? operand.some((member) => canonical(member) === canonical(found.value))
            : false;
        const v = found.found ? found.value : undefined;
        switch (operator) {
          case '$eq':
            return equal;
          case '$neq':
            return !equal;
          case '$gt':
            return found.found && sameKind(v, operand) && (v as number) > (operand as number);
          case '$gte':
            return found.found && sameKind(v, operand) && (v as number) >= (operand as number);
          case '$lt':
            return found.found && sameKind(v, operand) && (v as number) < (operand as number);
          case '$lte':
            return found.found && sameKind(v, operand) && (v as number) <= (operand as number);
          case '$in':
            return inList;
          case '$nin':
            return !inList;
          case '$exists':
            return found.found === operand;
          case '$startsWith':
            return typeof v === 'string' && v.slice(0, (operand as string).length) === operand;
          default:
            throw new Error(`reference: ${operator}`);
        }
      });
    }
    if (!ok) return false;
  }
  return true;
};

// ---------------------------------------------------------------------------------------------------------------
// Generators over a small vocabulary, so filters and events often meet.
// ---------------------------------------------------------------------------------------------------------------

const scalar = fc.oneof(
  fc.constantFrom('a', 'b', 'payout', 'payout.processed', 'EUR', 'eu-1', ''),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, 100, true, false, null),
);
const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('x', 'y'), scalar, { maxKeys: 2 }) },
);
const path = fc.constantFrom('type', 'tenant', 'producer', 'data', 'data.x', 'data.y', 'data.x.y', 'data.z');

const operators = fc
  .record(
    {
      $eq: value,
      $neq: value,
      $gt: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b', 'p')),
      $gte: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b', 'p')),
      $lt: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b', 'p')),
      $lte: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', 'b', 'p')),
      $in: fc.array(value, { maxLength: 4 }),
      $nin: fc.array(value, { maxLength: 4 }),
      $exists: fc.boolean(),
      $startsWith: fc.constantFrom('', 'a', 'pay', 'payout.', 'EU', 'eu'),
    },
    { requiredKeys: [] },
  )
  .filter((ops) => Object.keys(ops).length > 0);

const { filter } = fc.letrec<{ filter: Record<string, unknown>; condition: unknown }>((tie) => ({
  condition: fc.oneof({ weight: 2, arbitrary: value }, { weight: 3, arbitrary: operators }),
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: fc.dictionary(path, tie('condition'), { minKeys: 1, maxKeys: 3 }) },
    { weight: 1, arbitrary: fc.record({ $and: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ $or: fc.array(tie('filter'), { minLength: 1, maxLength: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ $not: tie('filter') }) },
  ),
}));

const subject: fc.Arbitrary<FilterSubject> = fc.record(
  {
    type: fc.constantFrom('payout.processed', 'catalog.PriceListUpdated', 'a', 'b'),
    tenant: fc.constantFrom('a', 'b', 'eu-1'),
    producer: fc.constantFrom('payout', 'catalog', 'p'),
    data: fc.oneof(
      { weight: 4, arbitrary: fc.dictionary(fc.constantFrom('x', 'y', 'z'), value, { maxKeys: 3 }) },
      { weight: 1, arbitrary: value },
    ),
  },
  { requiredKeys: ['type', 'data'] },
);

describe('the payload filter evaluator', () => {
  it('agrees with the reference evaluator on random filters and events', () => {
    fc.assert(
      fc.property(filter, subject, (generated, event) => {
        // Only filters the validation accepts are evaluated (the generator stays within its limits).
        fc.pre(filterProblems(generated).length === 0);
        expect(matchesFilter(generated as EventFilter, event)).toBe(reference(generated, event));
      }),
      { numRuns: 3_000 },
    );
  });

  it('accepts most generated filters (the property above is not vacuous)', () => {
    const samples = fc.sample(filter, 500);
    const valid = samples.filter((sample) => filterProblems(sample).length === 0).length;
    expect(valid).toBeGreaterThan(400);
  });

  it('matches the documented examples', () => {
    const payout: FilterSubject = {
      type: 'payout.processed',
      tenant: 'eu-1',
      producer: 'payouts',
      data: { amount_minor: 12_500, currency: 'EUR', method: { kind: 'sepa' } },
    };
    const cases: [EventFilter, boolean][] = [
      [{ 'data.currency': 'EUR' }, true],
      [{ 'data.amount_minor': { $gte: 10_000, $lt: 20_000 } }, true],
      [{ 'data.amount_minor': { $gt: '10000' } }, false],
      [{ type: { $startsWith: 'payout.' }, tenant: { $in: ['eu-1', 'eu-2'] } }, true],
      [{ 'data.method.kind': { $nin: ['card'] } }, true],
      [{ 'data.missing': { $exists: false } }, true],
      [{ 'data.missing': { $neq: 1 } }, true],
      [{ 'data.missing': { $gt: 0 } }, false],
      [{ $or: [{ 'data.currency': 'USD' }, { tenant: 'eu-1' }] }, true],
      [{ $not: { 'data.currency': 'EUR' } }, false],
      [{ 'data.method': { kind: 'sepa' } }, true],
      [{ $and: [{ producer: 'payouts' }, { 'data.amount_minor': { $lte: 12_499 } }] }, false],
    ];
    for (const [given, expected] of cases)
      expect(matchesFilter(given, payout), JSON.stringify(given)).toBe(expected);
  });
});

describe('filter validation', () => {
  it('names the path of every problem', () => {
    expect(
      filterProblems({
        'data.amount': { $gtt: 5 },
        payload: 1,
        $xor: [],
        $or: [],
        'data.currency': { $in: 'EUR', $exists: 'yes' },
        $and: [{ type: { $startsWith: 3 } }, 'no'],
        'data.when': { $lt: true },
      }),
    ).toEqual([
      { path: '$.data.amount.$gtt', message: expect.stringMatching(/^unknown operator/) },
      { path: '$.payload', message: expect.stringMatching(/^a path into type, tenant, producer, data/) },
      { path: '$.$xor', message: expect.stringMatching(/^unknown operator here/) },
      { path: '$.$or', message: 'a non-empty list of filters' },
      { path: '$.data.currency.$in', message: 'a list of values' },
      { path: '$.data.currency.$exists', message: 'true or false' },
      { path: '$.$and[0].type.$startsWith', message: 'a string' },
      { path: '$.$and[1]', message: 'an object of paths and operators' },
      { path: '$.data.when.$lt', message: 'a number or a string' },
    ]);
    expect(filterProblems([])).toEqual([{ path: '$', message: 'an object of paths and operators' }]);
  });

  it('bounds depth, conditions, lists and strings', () => {
    let deep: Record<string, unknown> = { type: 'a' };
    for (let level = 0; level < 10; level += 1) deep = { $not: deep };
    expect(filterProblems(deep).map((problem) => problem.message)).toContain('nested deeper than 8');
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`data.f${index}`, index]));
    expect(filterProblems(many)).toEqual([{ path: '$', message: 'at most 50 conditions (51 given)' }]);
    expect(
      filterProblems({ 'data.x': { $in: Array.from({ length: 101 }, (_, index) => index) } })[0]?.path,
    ).toBe('$.data.x.$in');
    expect(filterProblems({ 'data.x': 'x'.repeat(257) })[0]?.message).toBe(
      'a string of at most 256 characters',
    );
  });
});
