import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { ServiceError } from '../../domain/errors';
import type { ClientCertificate } from '../../ports/webhook-http';
import type { EndpointMtls, EndpointRecord } from '../../ports/webhooks';
import { LruMap } from '../../shared/lru';
import type { WebhookContext } from './context';

/** The `mtls` member of a create or update request. */
export interface MtlsInput {
  readonly client_certificate: string;
  readonly client_key: string;
}

/** What the API shows of an endpoint's client certificate: never the key, never the PEM. */
export interface MtlsSummary {
  readonly certificate_sha256: string;
  readonly subject: string;
  readonly issuer: string;
  readonly not_before: string;
  readonly not_after: string;
}

/** One problem of a request, by the JSON path of the field it is about (`$.mtls.client_key`). */
export interface EndpointProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * An endpoint request the schema let through but the use case refuses (an unusable client certificate): a 400
 * `invalid_request` naming the field. The messages never quote the key or the certificate.
 */
export class EndpointValidationError extends ServiceError {
  constructor(readonly problems: readonly EndpointProblem[]) {
    super('invalid_request', problems.map((problem) => `${problem.path}: ${problem.message}`).join('; '), {
      details: { problems },
    });
    this.name = 'EndpointValidationError';
  }
}

const CERTIFICATE_FIELD = '$.mtls.client_certificate';
const KEY_FIELD = '$.mtls.client_key';

/** Elliptic curves accepted for a client key (OpenSSL's names), with the names the API uses. */
const EC_CURVES: Readonly<Record<string, string>> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};
const RSA_MIN_BITS = 2048;
/** Larger RSA keys do not fit the secrets key's plaintext limit (KMS Encrypt: 4 KiB) once encoded. */
const RSA_MAX_BITS = 4096;
/** The id-kp-clientAuth extended key usage (RFC 5280). */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE_OID = '2.5.29.37.0';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;
const KEY_LABELS: ReadonlySet<string> = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);

const refuse = (path: string, message: string): never => {
  throw new EndpointValidationError([{ path, message }]);
};

/** `CN=a\nO=b` (Node's rendering) as `CN=a, O=b`. */
const distinguishedName = (text: string): string =>
  text
    .split('\n')
    .filter((line) => line.length > 0)
    .join(', ');

const certificateChain = (pem: string): X509Certificate[] => {
  if (/PRIVATE KEY-----/.test(pem))
    refuse(CERTIFICATE_FIELD, 'must hold certificates only: give the private key in client_key');
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) refuse(CERTIFICATE_FIELD, 'not a PEM certificate (-----BEGIN CERTIFICATE-----)');
  const outside = pem.replace(PEM_CERTIFICATE, '').trim();
  if (outside.length > 0) refuse(CERTIFICATE_FIELD, 'holds text besides its PEM certificates');
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch {
      return refuse(CERTIFICATE_FIELD, `certificate ${index + 1} of the chain does not parse`);
    }
  });
};

const privateKey = (pem: string): KeyObject => {
  if (/ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/.test(pem))
    refuse(KEY_FIELD, 'an encrypted key is not accepted: give it unencrypted (it is stored encrypted)');
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  const keys = blocks.filter((block) => KEY_LABELS.has(block[1] as string));
  const outside = pem.replace(PEM_BLOCK, '').trim();
  if (
    keys.length !== 1 ||
    outside.length > 0 ||
    blocks.some((block) => !KEY_LABELS.has(block[1] as string) && block[1] !== 'EC PARAMETERS')
  )
    refuse(KEY_FIELD, 'not one PEM private key (PKCS #8, or PKCS #1 / SEC 1)');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: (keys[0] as RegExpExecArray)[0], format: 'pem' });
  } catch {
    // Node's message is not passed on: it is not needed and the answer never describes the key's bytes.
    return refuse(KEY_FIELD, 'not a usable PEM private key');
  }
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa': {
      const bits = details.modulusLength ?? 0;
      if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS)
        refuse(KEY_FIELD, `an RSA key must have ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits (got ${bits})`);
      return key;
    }
    case 'ec':
      if (details.namedCurve === undefined || EC_CURVES[details.namedCurve] === undefined)
        refuse(KEY_FIELD, 'an EC key must be on P-256, P-384 or P-521');
      return key;
    case 'ed25519':
      return key;
    default:
      return refuse(
        KEY_FIELD,
        'unsupported key type: use RSA (2048–4096 bits), EC (P-256/384/521) or Ed25519',
      );
  }
};

/** A client certificate checked and ready to store: what is kept, and the key's PKCS #8 DER to encrypt. */
export interface ValidatedClientCertificate {
  readonly chainPem: string;
  readonly keyDer: Uint8Array;
  readonly summary: MtlsSummary;
}

/**
 * Checks a client certificate and key: the chain parses (leaf first, each next certificate the issuer of the one
 * before), the leaf is valid at `now` and allows client authentication, and the key is an unencrypted RSA, EC or
 * Ed25519 key that matches the leaf. Throws `EndpointValidationError` naming the field.
 */
export const validateClientCertificate = (input: MtlsInput, now: Date): ValidatedClientCertificate => {
  const chain = certificateChain(input.client_certificate);
  const leaf = chain[0] as X509Certificate;
  const notBefore = leaf.validFromDate;
  const notAfter = leaf.validToDate;
  if (notAfter.getTime() <= now.getTime())
    refuse(CERTIFICATE_FIELD, `the certificate expired on ${notAfter.toISOString()}`);
  if (notBefore.getTime() > now.getTime())
    refuse(CERTIFICATE_FIELD, `the certificate is not valid before ${notBefore.toISOString()}`);
  const usages = leaf.keyUsage;
  if (
    Array.isArray(usages) &&
    usages.length > 0 &&
    !usages.includes(CLIENT_AUTH_OID) &&
    !usages.includes(ANY_EXTENDED_KEY_USAGE_OID)
  )
    refuse(CERTIFICATE_FIELD, 'the certificate does not allow client authentication (extended key usage)');
  for (let index = 1; index < chain.length; index += 1) {
    const issuer = chain[index] as X509Certificate;
    const subject = chain[index - 1] as X509Certificate;
    if (!subject.checkIssued(issuer) || !subject.verify(issuer.publicKey))
      refuse(
        CERTIFICATE_FIELD,
        `certificate ${index + 1} of the chain did not issue certificate ${index}: give the leaf first`,
      );
  }
  const key = privateKey(input.client_key);
  if (!leaf.checkPrivateKey(key))
    refuse(KEY_FIELD, 'the key does not match the (first) certificate of client_certificate');
  return {
    chainPem: chain.map((certificate) => certificate.toString().trim()).join('\n'),
    keyDer: new Uint8Array(key.export({ type: 'pkcs8', format: 'der' })),
    summary: {
      certificate_sha256: createHash('sha256').update(leaf.raw).digest('hex'),
      subject: distinguishedName(leaf.subject),
      issuer: distinguishedName(leaf.issuer),
      not_before: notBefore.toISOString(),
      not_after: notAfter.toISOString(),
    },
  };
};

const keyContext = (endpointId: string, certificateSha256: string) => ({
  purpose: 'webhook-endpoint-mtls-key',
  endpoint_id: endpointId,
  certificate_sha256: certificateSha256,
});

/** The stored form: the chain as given (normalised), the key encrypted with the secrets key. */
export const storedMtls = async (
  ctx: Pick<WebhookContext, 'cipher'>,
  endpointId: string,
  validated: ValidatedClientCertificate,
): Promise<EndpointMtls> => ({
  certificate_chain: validated.chainPem,
  key_ciphertext: await ctx.cipher.encrypt(
    validated.keyDer,
    keyContext(endpointId, validated.summary.certificate_sha256),
  ),
  ...validated.summary,
});

export const mtlsSummary = (mtls: EndpointMtls): MtlsSummary => ({
  certificate_sha256: mtls.certificate_sha256,
  subject: mtls.subject,
  issuer: mtls.issuer,
  not_before: mtls.not_before,
  not_after: mtls.not_after,
});

/** Decrypted client certificates by key ciphertext, per function instance (one KMS call per key, not per attempt). */
const decrypted = new LruMap<ClientCertificate>(200);

/** The certificate and key an attempt presents to the endpoint, or undefined when it has no mTLS. */
export const clientCertificateOf = async (
  ctx: Pick<WebhookContext, 'cipher'>,
  record: EndpointRecord,
): Promise<ClientCertificate | undefined> => {
  const mtls = record.mtls;
  if (mtls === undefined) return undefined;
  const cached = decrypted.get(mtls.key_ciphertext);
  if (cached) return cached;
  const der = await ctx.cipher.decrypt(
    mtls.key_ciphertext,
    keyContext(record.endpoint_id, mtls.certificate_sha256),
  );
  const key = createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
  const certificate: ClientCertificate = {
    cert: mtls.certificate_chain,
    key: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  decrypted.set(mtls.key_ciphertext, certificate);
  return certificate;
};
