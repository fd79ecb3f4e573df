import { describe, expect, it } from 'vitest';
import { integerSetting } from '../../../functions/composition/environment';
import { journalSlicing } from '../../../functions/composition/journal';
import { fxTickSecondsFromEnv } from '../../../functions/composition/rates';
import { receiptExportSettings } from '../../../functions/composition/receipts';

describe('integer settings from the environment', () => {
  it('reads an integer within its range; unset or empty is undefined', () => {
    expect(integerSetting({ N: '0' }, 'N', 0, 10)).toBe(0);
    expect(integerSetting({ N: '10' }, 'N', 0, 10)).toBe(10);
    expect(integerSetting({}, 'N', 0, 10)).toBeUndefined();
    expect(integerSetting({ N: '' }, 'N', 0, 10)).toBeUndefined();
  });

  it.each(['11', '-1', '1.5', ' 3', '3 ', '0x3', 'three', '1e1'])(
    'refuses %j naming the variable, the range and the value',
    (value) => {
      expect(() => integerSetting({ N: value }, 'N', 0, 10)).toThrow(
        `N must be an integer from 0 to 10, got ${JSON.stringify(value)}`,
      );
    },
  );

  it('gives each setting its own default and range', () => {
    expect(journalSlicing({})).toEqual({ sliceSize: 32, sliceSeconds: 3600 });
    expect(journalSlicing({ JOURNAL_SLICE_SIZE: '5' }).sliceSize).toBe(5);
    expect(() => journalSlicing({ JOURNAL_SLICE_SIZE: '0' })).toThrow(/JOURNAL_SLICE_SIZE/);
    expect(receiptExportSettings({})).toEqual({ graceMinutes: 15, lookbackDays: 7 });
    expect(receiptExportSettings({ RECEIPT_EXPORT_GRACE_MINUTES: '0' }).graceMinutes).toBe(0);
    expect(() => receiptExportSettings({ RECEIPT_EXPORT_LOOKBACK_DAYS: '91' })).toThrow(
      /RECEIPT_EXPORT_LOOKBACK_DAYS must be an integer from 1 to 90/,
    );
    expect(fxTickSecondsFromEnv({})).toBeUndefined();
    expect(() => fxTickSecondsFromEnv({ FX_TICK_SECONDS: '0' })).toThrow(/FX_TICK_SECONDS/);
  });
});
