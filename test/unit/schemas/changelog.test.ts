import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CATALOG_EVENT_TYPES,
  ENVELOPE_VERSIONS,
  OPERATIONAL_EVENT_TYPES,
  PAYOUT_PROCESSED,
} from '../../../functions/domain/webhooks/envelope';
import { CHANGELOG } from '../../../functions/schemas/changelog';
import { changelogResponseSchema } from '../../../functions/schemas/webhooks';

describe('the changelog (C24)', () => {
  it('is published as docs/changelog.json, exactly as GET /changelog serves it', () => {
    const published = JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, '../../../docs/changelog.json'), 'utf8'),
    );
    expect(published).toEqual(CHANGELOG);
    expect(changelogResponseSchema.safeParse(CHANGELOG).success).toBe(true);
  });

  it('lists every envelope version and every event type the service produces', () => {
    expect(CHANGELOG.envelope_versions.map((entry) => entry.version)).toEqual([...ENVELOPE_VERSIONS]);
    expect(CHANGELOG.event_types.map((entry) => entry.type).sort()).toEqual(
      [...CATALOG_EVENT_TYPES, PAYOUT_PROCESSED, ...OPERATIONAL_EVENT_TYPES].sort(),
    );
  });
});
