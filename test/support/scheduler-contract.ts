import { describe, expect, it } from 'vitest';
import { InvalidScheduleNameError } from '../../functions/ports/schedule-name';
import type { OneTimeScheduler } from '../../functions/ports/scheduler';

export interface SchedulerUnderTest {
  readonly scheduler: OneTimeScheduler;
  /** The schedules the backing service holds now, by name (for AWS: the fake's state; locally: the table). */
  pending(): Promise<ReadonlySet<string>>;
}

/** The behaviour both scheduler adapters promise; each adapter's test file runs it. */
export const schedulerContract = (label: string, make: () => Promise<SchedulerUnderTest>) => {
  describe(`OneTimeScheduler contract: ${label}`, () => {
    const at = () => new Date(Date.now() + 3_600_000);

    it('creates a schedule once; the same name again reports exists', async () => {
      const { scheduler, pending } = await make();
      const schedule = { name: 'retry-evt1-ep1-3', at: at(), queue: 'delivery' as const, body: '{"n":1}' };
      expect(await scheduler.scheduleOnce(schedule)).toBe('created');
      expect(await scheduler.scheduleOnce({ ...schedule, body: '{"n":2}' })).toBe('exists');
      expect((await pending()).has(schedule.name)).toBe(true);
    });

    it('cancels a pending schedule, and ignores an unknown name', async () => {
      const { scheduler, pending } = await make();
      await scheduler.scheduleOnce({ name: 'to-cancel', at: at(), queue: 'delivery', body: '{}' });
      await scheduler.cancel('to-cancel');
      await scheduler.cancel('never-existed');
      expect((await pending()).has('to-cancel')).toBe(false);
    });

    it('refuses names EventBridge Scheduler would refuse', async () => {
      const { scheduler } = await make();
      for (const name of ['', 'has space', 'slash/name', 'x'.repeat(65)]) {
        await expect(
          scheduler.scheduleOnce({ name, at: at(), queue: 'delivery', body: '{}' }),
        ).rejects.toThrow(InvalidScheduleNameError);
      }
    });
  });
};
