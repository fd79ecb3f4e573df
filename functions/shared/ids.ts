import { randomBytes } from 'node:crypto';

/** Prefixed ULIDs (C4): `evt_`, `q_`, `rcpt_`, `rfd_` (refunds), `ep_`, `cr_`, `rpl_`, `trc_`. */
export type IdPrefix = 'evt' | 'q' | 'rcpt' | 'rfd' | 'ep' | 'cr' | 'rpl' | 'trc' | 'req' | 'upl';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
let lastRandom = 0n;

/**
 * A ULID (48-bit millisecond time + 80 random bits, Crockford base32), monotonic within a millisecond: the
 * random part of a later id in the same millisecond is the previous one plus one, so ids sort in creation order.
 * One 10-byte draw per id.
 */
export const ulid = (at: number = Date.now()): string => {
  let random: bigint;
  if (at === lastTime) {
    random = (lastRandom + 1n) & ((1n << 80n) - 1n);
  } else {
    random = BigInt(`0x${randomBytes(10).toString('hex')}`);
  }
  lastTime = at;
  lastRandom = random;
  return ulidOf(at, random);
};

/** The ULID of a millisecond time and an 80-bit random part (Crockford base32, 26 characters). */
export const ulidOf = (at: number, random: bigint): string => {
  let value = (BigInt(at) << 80n) | (random & ((1n << 80n) - 1n));
  const chars = new Array<string>(26);
  for (let index = 25; index >= 0; index -= 1) {
    chars[index] = CROCKFORD[Number(value & 31n)] as string;
    value >>= 5n;
  }
  return chars.join('');
};

export const newId = (prefix: IdPrefix, at?: Date): string => `${prefix}_${ulid(at?.getTime())}`;
