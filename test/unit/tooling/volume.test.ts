import { afterEach, describe, expect, it, vi } from 'vitest';
import { volume } from '../../support/volume';

describe('volume (how much of a heavy test runs)', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('runs the acceptance volume with CI set and the local one without', () => {
    vi.stubEnv('CI', 'true');
    expect(volume('ZZ_VOLUME', { local: 3, ci: 30 })).toBe(30);
    vi.stubEnv('CI', '');
    expect(volume('ZZ_VOLUME', { local: 3, ci: 30 })).toBe(3);
    vi.stubEnv('CI', 'false');
    expect(volume('ZZ_VOLUME', { local: 3, ci: 30 })).toBe(3);
    vi.stubEnv('CI', '1');
    expect(volume('ZZ_VOLUME', { local: 3, ci: 30 })).toBe(30);
  });

  it('takes the named variable over both', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('ZZ_VOLUME', '7');
    expect(volume('ZZ_VOLUME', { local: 3, ci: 30 })).toBe(7);
  });

  it.each(['0', '-2', '1.5', 'many'])('refuses %j, naming the variable', (asked) => {
    vi.stubEnv('ZZ_VOLUME', asked);
    expect(() => volume('ZZ_VOLUME', { local: 3, ci: 30 })).toThrow(/ZZ_VOLUME must be a positive integer/);
  });
});
