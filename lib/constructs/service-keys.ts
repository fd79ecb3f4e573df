import type { RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { KeyId, KeyKind } from '../../functions/definitions';
import { keyEntries } from '../definition-entries';
import { SECURE_DEFAULTS } from './defaults';

/** KMS key spec, usage and rotation for each kind of key in `KEYS`. */
const KEY_SHAPES: Readonly<
  Record<
    KeyKind,
    { readonly keySpec: kms.KeySpec; readonly keyUsage: kms.KeyUsage; readonly rotation: boolean }
  >
> = {
  ECC_NIST_P256_SIGN: {
    keySpec: kms.KeySpec.ECC_NIST_P256,
    keyUsage: kms.KeyUsage.SIGN_VERIFY,
    rotation: false,
  },
  HMAC_256: { keySpec: kms.KeySpec.HMAC_256, keyUsage: kms.KeyUsage.GENERATE_VERIFY_MAC, rotation: false },
  SYMMETRIC: {
    keySpec: kms.KeySpec.SYMMETRIC_DEFAULT,
    keyUsage: kms.KeyUsage.ENCRYPT_DECRYPT,
    rotation: true,
  },
};

/** The KMS actions a function needs to *use* a key of each kind (never to administer it). */
export const KEY_USE_ACTIONS: Readonly<Record<KeyKind, readonly string[]>> = {
  ECC_NIST_P256_SIGN: ['kms:Sign', 'kms:GetPublicKey'],
  HMAC_256: ['kms:GenerateMac', 'kms:VerifyMac'],
  SYMMETRIC: ['kms:Encrypt', 'kms:Decrypt'],
};

export interface ServiceKeysProps {
  /** Prefix of every alias: `alias/<aliasPrefix>/<key definition id>`. */
  readonly aliasPrefix: string;
  /**
   * What happens to the keys when they leave the stack. Deleting a key destroys every receipt signature's
   * verifiability and every encrypted item, so the keys are kept.
   * @default SECURE_DEFAULTS.statefulRemovalPolicy (RETAIN)
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * One customer-managed KMS key per entry of `KEYS`: the receipt signing key (ECC P-256, sign/verify), the
 * quote MAC key (HMAC-256) and the data key (symmetric, yearly rotation) that encrypts tables, queues, the
 * receipts bucket and endpoint secrets. Each gets an alias.
 */
export class ServiceKeys extends Construct {
  readonly keys: Readonly<Record<KeyId, kms.Key>>;

  constructor(scope: Construct, id: string, props: ServiceKeysProps) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? SECURE_DEFAULTS.statefulRemovalPolicy;
    this.keys = Object.fromEntries(
      keyEntries().map(([keyId, definition]) => {
        const shape = KEY_SHAPES[definition.kind];
        const key = new kms.Key(this, keyId, {
          description: definition.description,
          keySpec: shape.keySpec,
          keyUsage: shape.keyUsage,
          enableKeyRotation: shape.rotation,
          alias: `alias/${props.aliasPrefix}/${definition.id}`,
          removalPolicy,
        });
        return [keyId, key];
      }),
    ) as Record<KeyId, kms.Key>;
  }
}
