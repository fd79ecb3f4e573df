import { monotonicFactory } from 'ulid';

/** Prefixed ULIDs (C4): `evt_`, `q_`, `rcpt_`, `rfd_` (refunds), `ep_`, `cr_`, `rpl_`, `trc_`. */
export type IdPrefix = 'evt' | 'q' | 'rcpt' | 'rfd' | 'ep' | 'cr' | 'rpl' | 'trc' | 'req';

const nextUlid = monotonicFactory();

export const newId = (prefix: IdPrefix, at?: Date): string => `${prefix}_${nextUlid(at?.getTime())}`;
