/**
 * The Python and Perl receivers printed in docs/receiving-webhooks.md are run, as printed, against every
 * published signature vector (docs/webhook-signature-vectors.json): each vector verifies, and a tampered body,
 * signature, secret or timestamp does not. A missing interpreter skips its tests with the reason in the title.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const DOC = join(ROOT, 'docs', 'receiving-webhooks.md');
const VECTORS = join(ROOT, 'docs', 'webhook-signature-vectors.json');

interface Vector {
  readonly name: string;
  readonly secret?: string;
  readonly secrets?: readonly string[];
  readonly canonical_string: string;
}

const vectors = (JSON.parse(readFileSync(VECTORS, 'utf8')) as { vectors: Vector[] }).vectors;

/** The fenced block of `language` whose first line is the marker comment `# receiving-webhooks:<name>`. */
const snippet = (language: string, name: string): string => {
  const markdown = readFileSync(DOC, 'utf8');
  const blocks = [...markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)];
  const found = blocks.filter(
    (block) => block[1] === language && block[2]?.startsWith(`# receiving-webhooks:${name}\n`),
  );
  if (found.length !== 1)
    throw new Error(`expected one \`\`\`${language} block marked receiving-webhooks:${name}`);
  return found[0]?.[2] ?? '';
};

/** Whether an interpreter runs here (`<binary> <versionFlag>` exits 0). */
const available = (binary: string, versionFlag: string): boolean => {
  const probe = spawnSync(binary, [versionFlag], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
};

const work = mkdtempSync(join(tmpdir(), 'receiving-webhooks-doc-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What each driver prints per vector, one JSON object per line. */
interface VectorResult {
  readonly name: string;
  readonly canonical_ok: boolean;
  /** The expected header verifies with the vector's secret(s). */
  readonly valid: boolean;
  /** For a rotation vector: the header verifies with each secret alone. */
  readonly each_secret: boolean[];
  readonly tampered_body: boolean;
  readonly tampered_signature: boolean;
  readonly wrong_secret: boolean;
  /** verify_webhook on the whole request: accepted (true) or the refusal reason; null when the body is no envelope. */
  readonly accepted: boolean | string | null;
  readonly stale: string | null;
  readonly future: string | null;
  readonly mismatched_id: string | null;
  readonly missing_signature: string | null;
}

const PYTHON_DRIVER = `
import json as _json
import sys as _sys
from datetime import timedelta as _td

def _secrets(vector):
    return vector.get("secrets") or [vector["secret"]]

def _refusal(call):
    try:
        call()
        return True
    except WebhookRefused as refused:
        return refused.reason

_wrong = "whsec_" + base64.b64encode(bytes(range(32))).decode()
for vector in _json.load(open(_sys.argv[1], encoding="utf-8"))["vectors"]:
    secrets = _secrets(vector)
    body = vector["body"].encode("utf-8")
    args = (vector["timestamp"], vector["method"], vector["path"])
    header_value = vector["expected_signature"]
    first = header_value.split()[0]
    flipped = first[:3] + ("A" if first[3] != "A" else "B") + first[4:]
    result = {
        "name": vector["name"],
        "canonical_ok": canonical_string(*args, body).decode("utf-8") == vector["canonical_string"],
        "valid": signature_matches(secrets, *args, body, header_value),
        "each_secret": [signature_matches([s], *args, body, header_value) for s in secrets],
        "tampered_body": signature_matches(secrets, *args, body + b" ", header_value),
        "tampered_signature": signature_matches(secrets, *args, body, flipped),
        "wrong_secret": signature_matches([_wrong], *args, body, header_value),
        "accepted": None, "stale": None, "future": None, "mismatched_id": None, "missing_signature": None,
    }
    try:
        event_id = _json.loads(vector["body"])["event_id"]
    except (ValueError, KeyError, TypeError):
        event_id = None
    if event_id:
        headers = {"x-signature": header_value, "X-Timestamp": vector["timestamp"], "X-Event-ID": event_id}
        sent = datetime.strptime(vector["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
        def check(now, hdrs=headers):
            return _refusal(lambda: verify_webhook(secrets, vector["method"], vector["path"], hdrs, body, now))
        result["accepted"] = check(sent + _td(seconds=300))
        result["stale"] = check(sent + _td(seconds=301))
        result["future"] = check(sent - _td(seconds=301))
        result["mismatched_id"] = check(sent, dict(headers, **{"X-Event-ID": "evt_other"}))
        result["missing_signature"] = check(sent, {k: v for k, v in headers.items() if k != "x-signature"})
    print(_json.dumps(result))
`;

const PERL_DRIVER = `
package main;
use Encode ();

sub refusal {
    my ($call) = @_;
    my $ok = eval { $call->(); 1 };
    return $ok ? JSON::PP::true : do { my $reason = $@; chomp $reason; $reason };
}

my $wrong = 'whsec_' . MIME::Base64::encode_base64(join('', map { chr } 0 .. 31), '');
open my $fh, '<:raw', $ARGV[0] or die "cannot read vectors: $!";
my $doc = JSON::PP->new->utf8->decode(do { local $/; <$fh> });
my $out = JSON::PP->new->canonical;
for my $vector (@{ $doc->{vectors} }) {
    my @secrets = $vector->{secrets} ? @{ $vector->{secrets} } : ($vector->{secret});
    my $body = Encode::encode('UTF-8', $vector->{body});
    my @args = ($vector->{timestamp}, $vector->{method}, $vector->{path});
    my $header = $vector->{expected_signature};
    my ($first) = split / /, $header;
    my $flipped = substr($first, 0, 3) . (substr($first, 3, 1) eq 'A' ? 'B' : 'A') . substr($first, 4);
    my %result = (
        name               => $vector->{name},
        canonical_ok       => (canonical_string(@args, $body) eq $vector->{canonical_string} ? JSON::PP::true : JSON::PP::false),
        valid              => (signature_matches(\\@secrets, @args, $body, $header) ? JSON::PP::true : JSON::PP::false),
        each_secret        => [map { signature_matches([$_], @args, $body, $header) ? JSON::PP::true : JSON::PP::false } @secrets],
        tampered_body      => (signature_matches(\\@secrets, @args, "$body ", $header) ? JSON::PP::true : JSON::PP::false),
        tampered_signature => (signature_matches(\\@secrets, @args, $body, $flipped) ? JSON::PP::true : JSON::PP::false),
        wrong_secret       => (signature_matches([$wrong], @args, $body, $header) ? JSON::PP::true : JSON::PP::false),
        accepted => undef, stale => undef, future => undef, mismatched_id => undef, missing_signature => undef,
    );
    my $envelope = eval { JSON::PP->new->utf8->decode($body) };
    if (ref $envelope eq 'HASH' && $envelope->{event_id}) {
        my %headers = ('x-signature' => $header, 'X-Timestamp' => $vector->{timestamp}, 'X-Event-ID' => $envelope->{event_id});
        my @t = $vector->{timestamp} =~ /^(\\d{4})-(\\d\\d)-(\\d\\d)T(\\d\\d):(\\d\\d):(\\d\\d)\\.(\\d{3})Z$/;
        my $sent = Time::Local::timegm($t[5], $t[4], $t[3], $t[2], $t[1] - 1, $t[0]) + $t[6] / 1000;
        my $check = sub {
            my ($now, %h) = @_;
            %h = %headers unless %h;
            return refusal(sub { verify_webhook(secrets => \\@secrets, method => $vector->{method},
                path => $vector->{path}, headers => \\%h, body => $body, now => $now) });
        };
        $result{accepted} = $check->($sent + 300);
        $result{stale} = $check->($sent + 301);
        $result{future} = $check->($sent - 301);
        $result{mismatched_id} = $check->($sent, %headers, 'X-Event-ID' => 'evt_other');
        my %without = %headers;
        delete $without{'x-signature'};
        $result{missing_signature} = $check->($sent, %without);
    }
    print $out->encode(\\%result), "\\n";
}
`;

/** Runs snippet + driver with the interpreter; returns one result per vector. */
const run = (binary: string, file: string, source: string): VectorResult[] => {
  const path = join(work, file);
  writeFileSync(path, source);
  const result = spawnSync(binary, [path, VECTORS], { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`${binary} failed (${result.status}):\n${result.stderr}`);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as VectorResult);
};

const expectVerified = (results: VectorResult[]) => {
  expect(results.map((result) => result.name)).toEqual(vectors.map((vector) => vector.name));
  for (const result of results) {
    const context = `vector "${result.name}"`;
    expect(result.canonical_ok, context).toBe(true);
    expect(result.valid, context).toBe(true);
    expect(result.each_secret.every(Boolean), context).toBe(true);
    expect(result.tampered_body, context).toBe(false);
    expect(result.tampered_signature, context).toBe(false);
    expect(result.wrong_secret, context).toBe(false);
  }
  const rotation = results.find((result) => result.each_secret.length === 2);
  expect(rotation, 'a rotation vector with two secrets').toBeDefined();
  const requests = results.filter((result) => result.accepted !== null);
  // Every vector but the empty body is a whole envelope: verify_webhook checks the request end to end.
  expect(requests).toHaveLength(vectors.length - 1);
  for (const result of requests) {
    expect(
      {
        accepted: result.accepted,
        stale: result.stale,
        future: result.future,
        mismatched_id: result.mismatched_id,
        missing_signature: result.missing_signature,
      },
      `vector "${result.name}"`,
    ).toEqual({
      accepted: true,
      stale: 'timestamp_out_of_window',
      future: 'timestamp_out_of_window',
      mismatched_id: 'event_id_mismatch',
      missing_signature: 'missing_header',
    });
  }
};

describe('docs/receiving-webhooks.md', () => {
  it('prints exactly one marked Python and one marked Perl snippet', () => {
    expect(snippet('python', 'python')).toContain('def verify_webhook(');
    expect(snippet('perl', 'perl')).toContain('sub verify_webhook');
  });

  it('states the canonical string of C13 as the vectors file does', () => {
    const markdown = readFileSync(DOC, 'utf8');
    const first = vectors[0];
    expect(markdown).toContain(first?.canonical_string);
    expect(markdown).toMatch(/lowercase hexadecimal\*\* SHA-256 of the \*\*raw body bytes/);
  });
});

const hasPython = available('python3', '--version');
describe.skipIf(!hasPython)(
  `Python snippet against the signature vectors${hasPython ? '' : ' — SKIPPED: python3 is not on PATH'}`,
  () => {
    it('verifies every vector and refuses tampered ones', () => {
      expectVerified(
        run('python3', 'receiving_webhooks.py', `${snippet('python', 'python')}\n${PYTHON_DRIVER}`),
      );
    });
  },
);

const hasPerl = available('perl', '-v');
describe.skipIf(!hasPerl)(
  `Perl snippet against the signature vectors${hasPerl ? '' : ' — SKIPPED: perl is not on PATH'}`,
  () => {
    it('verifies every vector and refuses tampered ones', () => {
      expectVerified(run('perl', 'receiving_webhooks.pl', `${snippet('perl', 'perl')}\n${PERL_DRIVER}`));
    });
  },
);

describe.skipIf(!available('python3', '--version'))(
  'the Python Standard Webhooks and Ed25519 snippets',
  () => {
    it('verify every standard_webhooks and ed25519 vector, and refuse a tampered body or another key', () => {
      const driver = `
import json as _json, sys as _sys, base64 as _b64
_doc = _json.load(open(_sys.argv[1], encoding="utf-8"))
for v in _doc["standard_webhooks"]["vectors"]:
    secrets = v.get("secrets") or [v["secret"]]
    body = v["body"].encode("utf-8")
    args = (v["webhook_id"], v["webhook_timestamp"])
    print(_json.dumps({"name": v["name"], "kind": "hmac",
        "valid": standard_signature_matches(secrets, *args, body, v["expected_signature"]),
        "each": [standard_signature_matches([s], *args, body, v["expected_signature"]) for s in secrets],
        "tampered": standard_signature_matches(secrets, *args, body + b" ", v["expected_signature"])}))
jwks = _doc["ed25519"]["jwks"]
other = {"keys": [dict(jwks["keys"][0], x=_b64.urlsafe_b64encode(bytes(32)).decode().rstrip("="))]}
for v in _doc["ed25519"]["vectors"]:
    content = v["signed_content"].encode("utf-8")
    header = v["headers"].get("X-Signature") or v["headers"]["webhook-signature"]
    kid = v["headers"]["X-Signature-Key-Id"]
    print(_json.dumps({"name": v["name"], "kind": "ed25519",
        "valid": ed25519_signature_matches(jwks, kid, content, header),
        "each": [ed25519_signature_matches(jwks, kid, content, header)],
        "tampered": ed25519_signature_matches(jwks, kid, content + b" ", header)
            or ed25519_signature_matches(other, kid, content, header)
            or ed25519_signature_matches(jwks, "whk_unknown", content, header)}))
`;
      const results = run(
        'python3',
        'interop.py',
        `${snippet('python', 'standard-webhooks')}\n${snippet('python', 'ed25519')}\n${driver}`,
      ) as unknown as { name: string; kind: string; valid: boolean; each: boolean[]; tampered: boolean }[];
      const document = JSON.parse(readFileSync(VECTORS, 'utf8')) as {
        standard_webhooks: { vectors: unknown[] };
        ed25519: { vectors: unknown[] };
      };
      expect(results).toHaveLength(
        document.standard_webhooks.vectors.length + document.ed25519.vectors.length,
      );
      for (const result of results) {
        expect(result.valid, `${result.kind} ${result.name}`).toBe(true);
        expect(result.each.every(Boolean), `${result.kind} ${result.name}`).toBe(true);
        expect(result.tampered, `${result.kind} ${result.name}`).toBe(false);
      }
    });
  },
);
