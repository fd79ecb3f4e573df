import { describe, expect, it } from 'vitest';
import { CoalescedRead } from '../../../functions/shared/coalesced-read';

/** A read whose completion the test controls; records when each read was issued. */
const controlledSource = () => {
  const pending: { resolve: (value: number) => void; reject: (error: Error) => void }[] = [];
  let value = 0;
  const issuedWith: number[] = [];
  return {
    set: (next: number) => {
      value = next;
    },
    read: (): Promise<number> => {
      const seen = value;
      issuedWith.push(seen);
      return new Promise<number>((resolve, reject) => {
        pending.push({ resolve: () => resolve(seen), reject });
      });
    },
    settle: async (index: number, error?: Error) => {
      const entry = pending[index];
      if (!entry) throw new Error(`no read ${index}`);
      if (error) entry.reject(error);
      else entry.resolve(0);
      for (let i = 0; i < 5; i += 1) await Promise.resolve();
    },
    issuedWith,
  };
};

describe('CoalescedRead', () => {
  it('starts one read for the first caller and shares the next read among everyone arriving meanwhile', async () => {
    const source = controlledSource();
    const coalesced = new CoalescedRead(source.read);
    const first = coalesced.get();
    const waiting = [coalesced.get(), coalesced.get(), coalesced.get()];
    expect(source.issuedWith).toHaveLength(1);
    await source.settle(0);
    expect(source.issuedWith).toHaveLength(2);
    await source.settle(1);
    await expect(first).resolves.toBe(0);
    await expect(Promise.all(waiting)).resolves.toEqual([0, 0, 0]);
    expect(source.issuedWith).toHaveLength(2);
  });

  it('never answers a caller with a read issued before it called', async () => {
    const source = controlledSource();
    const coalesced = new CoalescedRead(source.read);
    const before = coalesced.get();
    source.set(7); // a write completes while the first read is in flight
    const after = coalesced.get();
    await source.settle(0);
    await source.settle(1);
    await expect(before).resolves.toBe(0);
    await expect(after).resolves.toBe(7);
    expect(source.issuedWith).toEqual([0, 7]);
  });

  it('passes a failed read to its callers only, and the next callers read again', async () => {
    const source = controlledSource();
    const coalesced = new CoalescedRead(source.read);
    const failing = coalesced.get();
    const queued = coalesced.get();
    await source.settle(0, new Error('throttled'));
    await expect(failing).rejects.toThrow('throttled');
    await source.settle(1);
    await expect(queued).resolves.toBe(0);
    const later = coalesced.get();
    expect(source.issuedWith).toHaveLength(3);
    await source.settle(2);
    await expect(later).resolves.toBe(0);
  });

  it('reads again for a caller arriving after everything settled', async () => {
    const source = controlledSource();
    const coalesced = new CoalescedRead(source.read);
    const first = coalesced.get();
    await source.settle(0);
    await first;
    source.set(3);
    const second = coalesced.get();
    await source.settle(1);
    await expect(second).resolves.toBe(3);
  });
});
