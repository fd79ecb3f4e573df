/**
 * Endpoint payload filters (C31), in the vocabulary of Convoy and Hookdeck Outpost: a filter is an object whose
 * keys are either logical operators (`$and`, `$or`: lists of filters; `$not`: one filter) or dotted paths into the
 * event (`type`, `tenant`, `producer`, `data`, `data.<field>…`), each given a bare value (equality) or an object of
 * comparison operators that must all hold (`$eq $neq $gt $gte $lt $lte $in $nin $exists $startsWith`). Every key
 * of an object must hold. Pure: validated when an endpoint is registered (`filterProblems`), evaluated at fan-out
 * (`matchesFilter`).
 *
 * Semantics, for a path's value `v` (missing when the path leads nowhere):
 * - `$eq x`: `v` is present and equal to `x` (JSON equality: same type, arrays and objects by content);
 *   `$neq x`: not `$eq x` (so also when `v` is missing).
 * - `$gt $gte $lt $lte x`: `v` and `x` are both numbers, or both strings (compared by UTF-16 code units);
 *   otherwise false.
 * - `$in [..]`: `v` is present and equal to one of them; `$nin [..]`: not `$in`.
 * - `$exists true|false`: `v` is present (or missing).
 * - `$startsWith s`: `v` is a string starting with `s`.
 */

/** The roots a filter path may start with. */
export const FILTER_ROOTS = ['type', 'tenant', 'producer', 'data'] as const;

export const COMPARISON_OPERATORS = [
  '$eq',
  '$neq',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$exists',
  '$startsWith',
] as const;
export const LOGICAL_OPERATORS = ['$and', '$or', '$not'] as const;

/** How deep filters nest, how many conditions and list members they hold, how long their strings are. */
export const FILTER_LIMITS = { depth: 8, conditions: 50, listLength: 100, stringLength: 256 } as const;

/** A validated filter (its shape checked by `filterProblems`). */
export type EventFilter = Readonly<Record<string, unknown>>;

/** What a filter is matched against. */
export interface FilterSubject {
  readonly type: string;
  readonly tenant?: string;
  readonly producer?: string;
  readonly data: unknown;
}

export interface FilterProblem {
  /** Where, from the filter's root: `$.data.amount.$gt`. */
  readonly path: string;
  readonly message: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const PATH = /^(type|tenant|producer|data)(\.[A-Za-z0-9_-]{1,64}){0,8}$/;

const isComparison = (key: string): key is (typeof COMPARISON_OPERATORS)[number] =>
  (COMPARISON_OPERATORS as readonly string[]).includes(key);

/** Every problem of a filter, each with its path (`$` is the filter itself); empty when it is valid. */
export const filterProblems = (filter: unknown): FilterProblem[] => {
  const problems: FilterProblem[] = [];
  let conditions = 0;
  const problem = (path: string, message: string) => {
    if (problems.length < 20) problems.push({ path, message });
  };
  /** A literal a path is compared with: JSON, strings and lists bounded. */
  const literal = (value: unknown, path: string, depth: number): void => {
    if (depth > FILTER_LIMITS.depth) {
      problem(path, `nested deeper than ${FILTER_LIMITS.depth}`);
      return;
    }
    if (typeof value === 'string') {
      if (value.length > FILTER_LIMITS.stringLength)
        problem(path, `a string of at most ${FILTER_LIMITS.stringLength} characters`);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) problem(path, 'a finite number');
    } else if (Array.isArray(value)) {
      if (value.length > FILTER_LIMITS.listLength)
        problem(path, `a list of at most ${FILTER_LIMITS.listLength} values`);
      for (const [index, member] of value.entries()) literal(member, `${path}[${index}]`, depth + 1);
    } else if (isObject(value)) {
      for (const [key, member] of Object.entries(value)) literal(member, `${path}.${key}`, depth + 1);
    } else if (typeof value !== 'boolean' && value !== null) {
      problem(path, 'a JSON value');
    }
  };
  const condition = (value: unknown, path: string, depth: number): void => {
    conditions += 1;
    // An object of which some key is an operator is a set of operators; any other value is a bare value.
    if (!isObject(value) || !Object.keys(value).some((key) => key.startsWith('$'))) {
      literal(value, path, depth);
      return;
    }
    if (Object.keys(value).length === 0) {
      problem(path, 'at least one operator');
      return;
    }
    for (const [operator, operand] of Object.entries(value)) {
      const at = `${path}.${operator}`;
      if (!isComparison(operator)) {
        problem(at, `unknown operator (one of ${COMPARISON_OPERATORS.join(' ')})`);
        continue;
      }
      if (operator === '$exists') {
        if (typeof operand !== 'boolean') problem(at, 'true or false');
      } else if (operator === '$startsWith') {
        if (typeof operand !== 'string') problem(at, 'a string');
        else literal(operand, at, depth + 1);
      } else if (operator === '$in' || operator === '$nin') {
        if (!Array.isArray(operand)) problem(at, 'a list of values');
        else literal(operand, at, depth + 1);
      } else if (operator === '$eq' || operator === '$neq') {
        literal(operand, at, depth + 1);
      } else if (typeof operand !== 'number' && typeof operand !== 'string') {
        problem(at, 'a number or a string');
      } else {
        literal(operand, at, depth + 1);
      }
    }
  };
  const node = (value: unknown, path: string, depth: number): void => {
    if (depth > FILTER_LIMITS.depth) {
      problem(path, `nested deeper than ${FILTER_LIMITS.depth}`);
      return;
    }
    if (!isObject(value)) {
      problem(path, 'an object of paths and operators');
      return;
    }
    for (const [key, member] of Object.entries(value)) {
      const at = `${path}.${key}`;
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(member) || member.length === 0) problem(at, 'a non-empty list of filters');
        else if (member.length > FILTER_LIMITS.listLength)
          problem(at, `at most ${FILTER_LIMITS.listLength} filters`);
        else for (const [index, entry] of member.entries()) node(entry, `${at}[${index}]`, depth + 1);
      } else if (key === '$not') {
        node(member, at, depth + 1);
      } else if (key.startsWith('$')) {
        problem(at, `unknown operator here (one of ${LOGICAL_OPERATORS.join(' ')}, or a path)`);
      } else if (!PATH.test(key)) {
        problem(at, `a path into ${FILTER_ROOTS.join(', ')} (e.g. data.amount_minor)`);
      } else {
        condition(member, at, depth + 1);
      }
    }
  };
  node(filter, '$', 0);
  if (conditions > FILTER_LIMITS.conditions)
    problem('$', `at most ${FILTER_LIMITS.conditions} conditions (${conditions} given)`);
  return problems;
};

const MISSING = Symbol('missing');

const valueAt = (subject: FilterSubject, path: string): unknown => {
  const [root, ...rest] = path.split('.');
  let value: unknown =
    root === 'type'
      ? subject.type
      : root === 'tenant'
        ? (subject.tenant ?? MISSING)
        : root === 'producer'
          ? (subject.producer ?? MISSING)
          : subject.data;
  for (const key of rest) {
    if (!isObject(value) || !Object.hasOwn(value, key)) return MISSING;
    value = value[key];
  }
  return value === undefined ? MISSING : value;
};

/** The value at a dotted path into `type`, `tenant`, `producer` or `data` (undefined when absent). */
export const pathValue = (subject: FilterSubject, path: string): unknown => {
  const value = valueAt(subject, path);
  return value === MISSING ? undefined : value;
};

/** JSON equality: same type, lists member by member, objects key by key. */
export const jsonEqual = (left: unknown, right: unknown): boolean => {
  if (Array.isArray(left) || Array.isArray(right))
    return (
      Array.isArray(left) &&
      Array.isArray(right) &&
      left.length === right.length &&
      left.every((member, index) => jsonEqual(member, right[index]))
    );
  if (isObject(left) || isObject(right)) {
    if (!isObject(left) || !isObject(right)) return false;
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length &&
      keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]))
    );
  }
  return left === right;
};

const ordered = (value: unknown, operand: unknown, test: (order: number) => boolean): boolean => {
  if (typeof value === 'number' && typeof operand === 'number') return test(value - operand);
  if (typeof value === 'string' && typeof operand === 'string')
    return test(value < operand ? -1 : value > operand ? 1 : 0);
  return false;
};

const holds = (operator: string, value: unknown, operand: unknown): boolean => {
  const present = value !== MISSING;
  switch (operator) {
    case '$eq':
      return present && jsonEqual(value, operand);
    case '$neq':
      return !(present && jsonEqual(value, operand));
    case '$gt':
      return present && ordered(value, operand, (order) => order > 0);
    case '$gte':
      return present && ordered(value, operand, (order) => order >= 0);
    case '$lt':
      return present && ordered(value, operand, (order) => order < 0);
    case '$lte':
      return present && ordered(value, operand, (order) => order <= 0);
    case '$in':
      return present && (operand as unknown[]).some((member) => jsonEqual(value, member));
    case '$nin':
      return !(present && (operand as unknown[]).some((member) => jsonEqual(value, member)));
    case '$exists':
      return present === operand;
    case '$startsWith':
      return typeof value === 'string' && value.startsWith(operand as string);
    default:
      return false;
  }
};

/** Whether an event matches a filter validated by `filterProblems`. */
export const matchesFilter = (filter: EventFilter, subject: FilterSubject): boolean =>
  Object.entries(filter).every(([key, member]) => {
    if (key === '$and') return (member as EventFilter[]).every((entry) => matchesFilter(entry, subject));
    if (key === '$or') return (member as EventFilter[]).some((entry) => matchesFilter(entry, subject));
    if (key === '$not') return !matchesFilter(member as EventFilter, subject);
    const value = valueAt(subject, key);
    if (isObject(member) && Object.keys(member).some((name) => name.startsWith('$')))
      return Object.entries(member).every(([operator, operand]) => holds(operator, value, operand));
    return holds('$eq', value, member);
  });
