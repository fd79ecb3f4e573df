/**
 * `npm run verify-release -- <release.json> [--keys <url-or-file>]`
 * `npm run verify-release -- --cr <cr_id> [--out <file>] [--keys <url-or-file>] [--sigv4]`
 *
 * Verifies the DSSE-signed release of a published change request offline: the ECDSA P-256 signature over the
 * DSSE pre-authentication encoding with the service's public keys (a JWKS: `GET /keys`, a URL or a saved
 * file), the payload type `application/vnd.pricing.release+json`, and that the payload is the RFC 8785 form of
 * exactly `{ cr_id, kind, versions, content_sha256, author, approvers, effective_from }` with two distinct
 * approvers other than the author. With `--cr` the release is fetched from `GET /audit/releases/<cr_id>` with
 * the admin client (the local admin token, or IAM SigV4 with `--sigv4`), and `--out` saves it.
 *
 * Exit code 0 when it verifies (the release's statement is printed), 1 when it does not (with the reason),
 * 2 for a wrong command line.
 */
import {
  type DsseKeys,
  DsseVerificationError,
  RELEASE_PAYLOAD_TYPE,
  releasePayload,
  verifyEnvelope,
} from '../functions/domain/audit/dsse';
import { REQUIRED_APPROVALS } from '../functions/domain/change-control/approvals';
import { AdminClient, type AdminClientOptions } from './admin-client';
import { type CliIo, type Help, isHelp, parseToolLine, runMain, UsageError } from './cli';
import { defaultKeysSource, loadJson, loadKeys, runVerifier, VERIFIER_OPTIONS, verifierFile } from './keys';

export const USAGE = `usage:
  npm run verify-release -- <release.json> [--keys <url-or-file>]
  npm run verify-release -- --cr <cr_id> [--out <file>] [--keys <url-or-file>] [--sigv4]
keys default to $API_URL/keys (the local stack by default)`;

const CR_ID = /^cr_[0-9A-HJKMNP-TV-Z]{26}$/;

export interface Options {
  readonly file?: string;
  readonly cr?: string;
  readonly out?: string;
  readonly keys?: string;
  readonly sigv4?: true;
}

export const parseOptions = (argv: readonly string[]): Options | Help => {
  const line = parseToolLine(argv, { ...VERIFIER_OPTIONS, cr: { type: 'string', value: 'a cr_… id' } });
  if (isHelp(line)) return line;
  const { cr, out, keys, sigv4 } = line.values;
  const file = verifierFile(line, {
    option: '--cr',
    given: cr,
    value: '<cr_id>',
    file: 'a release file',
    fetched: 'a release',
  });
  if (cr !== undefined && !CR_ID.test(cr)) throw new UsageError('--cr needs a cr_… id');
  return {
    ...(file === undefined ? {} : { file }),
    ...(cr === undefined ? {} : { cr }),
    ...(out === undefined ? {} : { out }),
    ...(keys === undefined ? {} : { keys }),
    ...(sigv4 ? { sigv4: true as const } : {}),
  };
};

export interface ReleaseStatement {
  readonly cr_id: string;
  readonly kind: string;
  readonly versions: {
    readonly pricelist_version: number;
    readonly fx_version: string;
    readonly tax_rule_version: number;
  };
  readonly content_sha256: string;
  readonly author: string;
  readonly approvers: readonly string[];
  readonly effective_from: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The release's statement when the envelope verifies and states what a release must: the exact fields, in
 * their canonical form, and four eyes (two distinct approvers, neither the author). Throws with the reason.
 */
export const verifyRelease = (
  envelope: unknown,
  keys: DsseKeys,
): ReleaseStatement & { readonly keyid: string } => {
  const verified = verifyEnvelope(envelope, keys, { expectedPayloadType: RELEASE_PAYLOAD_TYPE });
  const text = Buffer.from(verified.payload).toString('utf8');
  let statement: unknown;
  try {
    statement = JSON.parse(text);
  } catch {
    throw new Error('the signed payload is not JSON');
  }
  if (!isRecord(statement) || !isRecord(statement.versions) || !Array.isArray(statement.approvers)) {
    throw new Error('the signed payload is not a release statement');
  }
  const release = statement as unknown as ReleaseStatement;
  if (Buffer.from(releasePayload(release)).toString('utf8') !== text) {
    throw new Error('the signed payload is not the canonical (RFC 8785) release statement');
  }
  const approvers = new Set(release.approvers);
  if (approvers.size < REQUIRED_APPROVALS || approvers.has(release.author)) {
    throw new Error(
      `the release names ${approvers.size} distinct approver(s)${approvers.has(release.author) ? ', the author among them' : ''}: four eyes need ${REQUIRED_APPROVALS} besides the author`,
    );
  }
  return { ...release, keyid: verified.keyid };
};

export const describeStatement = (statement: ReleaseStatement & { readonly keyid: string }): string =>
  [
    `release ${statement.cr_id}: OK — signed by key ${statement.keyid}`,
    `  kind            ${statement.kind}`,
    `  versions        pricelist_version ${statement.versions.pricelist_version}, ${statement.versions.fx_version}, tax_rule_version ${statement.versions.tax_rule_version}`,
    `  effective_from  ${statement.effective_from}`,
    `  author          ${statement.author}`,
    `  approvers       ${statement.approvers.join(', ')}`,
    `  content_sha256  ${statement.content_sha256}`,
    '',
  ].join('\n');

export const run = (
  argv: readonly string[],
  io: CliIo,
  clientOptions: Omit<AdminClientOptions, 'sigv4'> = {},
): Promise<number> =>
  runVerifier(argv, io, {
    usage: USAGE,
    parse: parseOptions,
    execute: async (options) => {
      let envelope: unknown;
      if (options.cr !== undefined) {
        const client = await AdminClient.connect(io, {
          ...clientOptions,
          ...(options.sigv4 ? { sigv4: true } : {}),
        });
        ({ body: envelope } = await client.get(`/audit/releases/${options.cr}`));
        if (options.out !== undefined) {
          await io.writeFile(options.out, `${JSON.stringify(envelope, null, 2)}\n`);
          io.stdout(`release saved to ${options.out}\n`);
        }
      } else {
        envelope = await loadJson(io, options.file as string);
      }
      const keys = await loadKeys(io, options.keys ?? defaultKeysSource(io));
      try {
        io.stdout(describeStatement(verifyRelease(envelope, keys)));
        return 0;
      } catch (error) {
        const reason =
          error instanceof DsseVerificationError
            ? `${error.reason}: ${error.message}`
            : (error as Error).message;
        io.stdout(`release: INVALID — ${reason}\n`);
        return 1;
      }
    },
  });

await runMain(import.meta.url, run);
