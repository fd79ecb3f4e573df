/**
 * A throwaway PKI for TLS tests: a CA, server certificates (for `localhost`, 127.0.0.1 and ::1 by default) and
 * client certificates it issues, made with `@peculiar/x509` over WebCrypto. Keys are extractable so they can be
 * handed to Node's TLS as PEM; nothing here is meant to leave a test.
 */
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/** The key algorithms a test can ask for. */
export type TestKeyAlgorithm = 'ec-p256' | 'ec-p384' | 'rsa-2048' | 'ed25519';

const GENERATION: Readonly<
  Record<TestKeyAlgorithm, webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams | webcrypto.Algorithm>
> = {
  'ec-p256': { name: 'ECDSA', namedCurve: 'P-256' } as webcrypto.EcKeyGenParams,
  'ec-p384': { name: 'ECDSA', namedCurve: 'P-384' } as webcrypto.EcKeyGenParams,
  'rsa-2048': {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  } as webcrypto.RsaHashedKeyGenParams,
  ed25519: { name: 'Ed25519' },
};

const SIGNING: Readonly<Record<TestKeyAlgorithm, webcrypto.Algorithm | webcrypto.EcdsaParams>> = {
  'ec-p256': { name: 'ECDSA', hash: 'SHA-256' } as webcrypto.EcdsaParams,
  'ec-p384': { name: 'ECDSA', hash: 'SHA-384' } as webcrypto.EcdsaParams,
  'rsa-2048': { name: 'RSASSA-PKCS1-v1_5' },
  ed25519: { name: 'Ed25519' },
};

const DAY_MS = 86_400_000;

/** A certificate with its key, in the forms tests need. */
export interface IssuedCertificate {
  /** PEM of the certificate alone. */
  readonly certPem: string;
  /** PKCS #8 PEM of its private key (unencrypted). */
  readonly keyPem: string;
  readonly certificate: x509.X509Certificate;
  readonly keys: webcrypto.CryptoKeyPair;
  readonly algorithm: TestKeyAlgorithm;
}

export const generateKeys = async (algorithm: TestKeyAlgorithm): Promise<webcrypto.CryptoKeyPair> =>
  (await webcrypto.subtle.generateKey(GENERATION[algorithm] as webcrypto.EcKeyGenParams, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;

const pkcs8Pem = async (key: webcrypto.CryptoKey): Promise<string> =>
  x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

/** A private key PEM of a fresh key pair (for a key that matches no certificate). */
export const privateKeyPem = async (algorithm: TestKeyAlgorithm = 'ec-p256'): Promise<string> =>
  pkcs8Pem((await generateKeys(algorithm)).privateKey);

/** The key PEM encrypted with a passphrase (PKCS #8 `ENCRYPTED PRIVATE KEY`, AES-256-CBC). */
export const encryptedKeyPem = (keyPem: string, passphrase = 'correct horse'): string =>
  createPrivateKey(keyPem)
    .export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase })
    .toString();

export interface CertificateOptions {
  /** Common name of the subject. */
  readonly commonName: string;
  readonly algorithm?: TestKeyAlgorithm;
  /** @default now − 1 day */
  readonly notBefore?: Date;
  /** @default now + 30 days */
  readonly notAfter?: Date;
}

/** A self-signed CA that issues server and client certificates. */
export interface TestCa extends IssuedCertificate {
  issueServer(options: CertificateOptions & ServerNames): Promise<IssuedCertificate>;
  issueClient(
    options: CertificateOptions & { readonly extendedKeyUsage?: readonly string[] },
  ): Promise<IssuedCertificate>;
  /** An intermediate CA signed by this one (its `certPem` is the intermediate alone). */
  issueIntermediate(options: CertificateOptions): Promise<TestCa>;
}

export interface ServerNames {
  /** @default ['localhost'] */
  readonly dnsNames?: readonly string[];
  /** @default ['127.0.0.1', '::1'] */
  readonly ipAddresses?: readonly string[];
}

const validity = (options: CertificateOptions) => {
  const now = Date.now();
  return {
    notBefore: options.notBefore ?? new Date(now - DAY_MS),
    notAfter: options.notAfter ?? new Date(now + 30 * DAY_MS),
  };
};

const serial = (): string => {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] as number) & 0x7f;
  return Buffer.from(bytes).toString('hex');
};

const issued = async (
  certificate: x509.X509Certificate,
  keys: webcrypto.CryptoKeyPair,
  algorithm: TestKeyAlgorithm,
): Promise<IssuedCertificate> => ({
  certPem: certificate.toString('pem'),
  keyPem: await pkcs8Pem(keys.privateKey),
  certificate,
  keys,
  algorithm,
});

const caFrom = (ca: IssuedCertificate): TestCa => {
  const issue = async (
    options: CertificateOptions,
    extensions: x509.Extension[],
  ): Promise<IssuedCertificate> => {
    const algorithm = options.algorithm ?? 'ec-p256';
    const keys = await generateKeys(algorithm);
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${options.commonName}`,
      issuer: ca.certificate.subject,
      ...validity(options),
      publicKey: keys.publicKey,
      signingKey: ca.keys.privateKey,
      signingAlgorithm: SIGNING[ca.algorithm],
      extensions: [
        ...extensions,
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        await x509.AuthorityKeyIdentifierExtension.create(ca.keys.publicKey),
      ],
    });
    return issued(certificate, keys, algorithm);
  };
  return {
    ...ca,
    issueServer: (options) =>
      issue(options, [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          ...(options.dnsNames ?? ['localhost']).map((value) => ({ type: 'dns' as const, value })),
          ...(options.ipAddresses ?? ['127.0.0.1', '::1']).map((value) => ({ type: 'ip' as const, value })),
        ]),
      ]),
    issueClient: (options) =>
      issue(options, [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension([
          ...(options.extendedKeyUsage ?? [x509.ExtendedKeyUsage.clientAuth]),
        ]),
      ]),
    issueIntermediate: async (options) =>
      caFrom(
        await issue(options, [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        ]),
      ),
  };
};

/** A fresh self-signed root CA. */
export const createTestCa = async (options: Partial<CertificateOptions> = {}): Promise<TestCa> => {
  const algorithm = options.algorithm ?? 'ec-p256';
  const keys = await generateKeys(algorithm);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${options.commonName ?? 'Test Root CA'}`,
    ...validity({
      commonName: '',
      ...options,
      notAfter: options.notAfter ?? new Date(Date.now() + 365 * DAY_MS),
    }),
    keys,
    signingAlgorithm: SIGNING[algorithm],
    extensions: [
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return caFrom(await issued(certificate, keys, algorithm));
};
