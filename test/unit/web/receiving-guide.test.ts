import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guideSnippet } from '../../../web/shared/receiving-guide';

const guide = readFileSync(path.resolve(import.meta.dirname, '../../../docs/receiving-webhooks.md'), 'utf8');

describe("the portal's verification code, read from the receiving guide itself", () => {
  it('finds the TypeScript and the Python receivers of section 9', () => {
    expect(guideSnippet(guide, 'TypeScript', 'ts')).toContain('verifyWebhook');
    expect(guideSnippet(guide, 'Python', 'python')).toContain('def verify_webhook(');
  });
  it('answers nothing for a heading or a language the guide lacks', () => {
    expect(guideSnippet(guide, 'Cobol', 'cobol')).toBe('');
    expect(guideSnippet('### TypeScript\nno code', 'TypeScript', 'ts')).toBe('');
  });
});
