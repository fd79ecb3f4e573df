import { afterEach, beforeEach, type MockInstance, vi } from 'vitest';

/**
 * Captures what the service's loggers write during each test of the calling file (or `describe`): Powertools
 * writes INFO lines to stdout and WARN/ERROR lines to stderr; both are kept, in order. Call it at the top of a
 * file or a `describe`; read the lines with `lines()`.
 */
export const captureLogLines = (): { readonly lines: () => string[] } => {
  let captured: string[] = [];
  let spies: MockInstance<typeof process.stdout.write>[] = [];
  const capture = (stream: NodeJS.WriteStream): MockInstance<typeof process.stdout.write> =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array): boolean => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    });
  beforeEach(() => {
    captured = [];
    spies = [capture(process.stdout), capture(process.stderr)];
  });
  afterEach(() => {
    for (const spy of spies) spy.mockRestore();
  });
  return { lines: () => captured };
};
