import type { RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { KEY_USES, type KeyId, type KeyKind, type KeyUse } from '../../functions/definitions';
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

/** The KMS actions of some uses of a key of one kind, sorted and without repeats. */
export const keyUseActions = <Kind extends KeyKind>(kind: Kind, uses: readonly KeyUse<Kind>[]): string[] => {
  const table = KEY_USES[kind] as Readonly<Record<KeyUse<Kind>, readonly string[]>>;
  return [...new Set(uses.flatMap((use) => table[use]))].sort();
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
 * quote MAC key (HMAC-256), the data key (symmetric, yearly rotation) that encrypts tables, queues and buckets
 * through those services only, and the secrets key (symmetric, yearly rotation) the functions that handle
 * endpoint secrets and sealed answers use directly. Each gets an alias.
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
