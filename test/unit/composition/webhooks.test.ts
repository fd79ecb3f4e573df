import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AWS_EGRESS,
  egressPolicyFromEnv,
  LOCAL_EGRESS,
  retryPolicyFromEnv,
  webhookSettingsFromEnv,
} from '../../../functions/composition/webhooks';
import { DEFAULT_RETRY_POLICY } from '../../../functions/domain/webhooks/retry-policy';
import { retentionDaysFor } from '../../../functions/usecases/webhooks/context';
import { createTestCa } from '../../support/test-pki';

describe('retryPolicyFromEnv', () => {
  it('is the production schedule when nothing is set', () => {
    expect(retryPolicyFromEnv({})).toEqual(DEFAULT_RETRY_POLICY);
  });

  it('shortens the schedule, the daily retries and the timeout only through configuration', () => {
    expect(
      retryPolicyFromEnv({
        WEBHOOK_BACKOFF_SECONDS: '1, 2,5',
        WEBHOOK_DAILY_RETRY_DAYS: '0',
        WEBHOOK_ATTEMPT_TIMEOUT_MS: '500',
      }),
    ).toEqual({
      ...DEFAULT_RETRY_POLICY,
      backoffSeconds: [1, 2, 5],
      dailyRetryDays: 0,
      attemptTimeoutMs: 500,
    });
  });

  it('refuses values that are not numbers, naming the variable', () => {
    expect(() => retryPolicyFromEnv({ WEBHOOK_BACKOFF_SECONDS: '1,soon' })).toThrow(
      /WEBHOOK_BACKOFF_SECONDS/,
    );
    expect(() => retryPolicyFromEnv({ WEBHOOK_ATTEMPT_TIMEOUT_MS: '-1' })).toThrow();
  });
});

describe('egressPolicyFromEnv', () => {
  it('keeps the defaults: https and public addresses only in AWS, loopback over http locally', () => {
    expect(egressPolicyFromEnv({}, AWS_EGRESS)).toEqual({ allowHttp: false, allowedCidrs: [] });
    expect(egressPolicyFromEnv({}, LOCAL_EGRESS)).toEqual(LOCAL_EGRESS);
  });

  it('reads an allow-list and the http switch', () => {
    expect(
      egressPolicyFromEnv(
        { WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8, fd00::/8,', WEBHOOK_ALLOW_HTTP: 'false' },
        LOCAL_EGRESS,
      ),
    ).toEqual({ allowHttp: false, allowedCidrs: ['10.0.0.0/8', 'fd00::/8'] });
    expect(egressPolicyFromEnv({ WEBHOOK_ALLOWED_CIDRS: '' }, LOCAL_EGRESS)).toEqual({
      allowHttp: true,
      allowedCidrs: [],
    });
  });

  it('trusts the CA certificates of the file WEBHOOK_CA_CERTS names, besides the public roots', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'webhook-ca-'));
    try {
      const [first, second] = await Promise.all([createTestCa(), createTestCa({ commonName: 'Other CA' })]);
      const file = path.join(directory, 'cas.pem');
      writeFileSync(file, `# local receivers\n${first.certPem}\n${second.certPem}`);
      const policy = egressPolicyFromEnv({ WEBHOOK_CA_CERTS: file }, LOCAL_EGRESS);
      expect(policy).toMatchObject(LOCAL_EGRESS);
      expect(policy.trustedCaCertificates?.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);

      // Refused at start, naming the file, never quoting it.
      const empty = path.join(directory, 'empty.pem');
      writeFileSync(empty, 'no certificate here');
      expect(() => egressPolicyFromEnv({ WEBHOOK_CA_CERTS: empty }, LOCAL_EGRESS)).toThrow(
        /empty\.pem holds no PEM/,
      );
      const broken = path.join(directory, 'broken.pem');
      writeFileSync(broken, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
      expect(() => egressPolicyFromEnv({ WEBHOOK_CA_CERTS: broken }, LOCAL_EGRESS)).toThrow(
        /certificate 1 in .*broken\.pem does not parse/,
      );
      expect(() =>
        egressPolicyFromEnv({ WEBHOOK_CA_CERTS: path.join(directory, 'missing.pem') }, AWS_EGRESS),
      ).toThrow(/cannot read/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe('webhookSettingsFromEnv (per-tenant retention)', () => {
  it('reads days by tenant, and nothing when unset', () => {
    expect(webhookSettingsFromEnv({})).toEqual({});
    expect(webhookSettingsFromEnv({ WEBHOOK_TENANT_RETENTION_DAYS: '{"eu-1":7,"acme":14}' })).toEqual({
      tenantRetentionDays: { 'eu-1': 7, acme: 14 },
    });
  });

  it('stops at start on a malformed value, naming the variable and the problem', () => {
    expect(() => webhookSettingsFromEnv({ WEBHOOK_TENANT_RETENTION_DAYS: '{eu-1:7}' })).toThrow(
      /WEBHOOK_TENANT_RETENTION_DAYS: not JSON/,
    );
    expect(() => webhookSettingsFromEnv({ WEBHOOK_TENANT_RETENTION_DAYS: '{"eu-1":0}' })).toThrow(
      /WEBHOOK_TENANT_RETENTION_DAYS: eu-1: /,
    );
    expect(() => webhookSettingsFromEnv({ WEBHOOK_TENANT_RETENTION_DAYS: '{"eu-1":7.5}' })).toThrow(
      /WEBHOOK_TENANT_RETENTION_DAYS/,
    );
    expect(() => webhookSettingsFromEnv({ WEBHOOK_TENANT_RETENTION_DAYS: '[7]' })).toThrow(
      /WEBHOOK_TENANT_RETENTION_DAYS/,
    );
  });

  it("a tenant's retention applies only when shorter than the service's, and only to that tenant", () => {
    const settings = { bodyTtlDays: 30, tenantRetentionDays: { 'eu-1': 7, long: 30 } };
    expect(retentionDaysFor(settings, 'eu-1')).toBe(7);
    expect(retentionDaysFor(settings, 'long')).toBe(30);
    expect(retentionDaysFor(settings, 'other')).toBe(30);
    expect(retentionDaysFor(settings, undefined)).toBe(30);
    expect(retentionDaysFor(settings, 'constructor')).toBe(30);
    expect(retentionDaysFor({ bodyTtlDays: 5, tenantRetentionDays: { 'eu-1': 7 } }, 'eu-1')).toBe(5);
  });
});
