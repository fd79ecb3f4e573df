import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  isSecretRef,
  SecretUnavailableError,
  type SecretUnavailableReason,
  type SecretValues,
  usableSecretValue,
} from '../../ports/secrets';

/** A secret file is read only up to this size (a provider credential is a few dozen bytes). */
const MAX_SECRET_FILE_BYTES = 16 * 1024;

/** Permission bits for users other than the owner and the group: any of them refuses the file. */
const OTHER_USERS = 0o007;

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? code : undefined;
};

const reasonOf = (code: string | undefined): SecretUnavailableReason => {
  if (code === 'ENOENT' || code === 'ENOTDIR') return 'not_found';
  if (code === 'EACCES' || code === 'EPERM') return 'access_denied';
  // O_NOFOLLOW on a symbolic link.
  if (code === 'ELOOP' || code === 'EMLINK') return 'insecure_permissions';
  return 'unreadable';
};

/**
 * The local stack's `SecretValues`: the file `<directory>/<ref>` (a `/` in the reference is a subdirectory),
 * read on every call. Refused: a reference that is not a valid `secret_ref` (no `..`, no absolute path), a file
 * that resolves outside the directory, a symbolic link as the file itself, anything but a regular file, and a
 * file other users may read, write or execute (`chmod 600` or `640`). Errors name the reference and the
 * reason, never the content.
 */
export class FileSecretValues implements SecretValues {
  constructor(private readonly directory: string) {}

  async value(ref: string): Promise<string> {
    if (!isSecretRef(ref)) throw new SecretUnavailableError('(invalid)', 'invalid_reference');
    const root = path.resolve(this.directory);
    const file = path.resolve(root, ref);
    const relative = path.relative(root, file);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative))
      throw new SecretUnavailableError(ref, 'invalid_reference');
    const fail = (error: unknown): never => {
      if (error instanceof SecretUnavailableError) throw error;
      const code = codeOf(error);
      throw new SecretUnavailableError(ref, reasonOf(code), code);
    };
    // Directories on the way may be links (a data directory on another disk), but the file must stay inside.
    try {
      const [realRoot, realParent] = await Promise.all([realpath(root), realpath(path.dirname(file))]);
      const inside = path.relative(realRoot, realParent);
      if (inside.startsWith('..') || path.isAbsolute(inside))
        throw new SecretUnavailableError(ref, 'invalid_reference');
    } catch (error) {
      fail(error);
    }
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      // O_NONBLOCK: a FIFO planted under the name cannot hang the read.
      handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const stats = await handle.stat();
      if (!stats.isFile()) throw new SecretUnavailableError(ref, 'unreadable', 'not a regular file');
      if ((stats.mode & OTHER_USERS) !== 0)
        throw new SecretUnavailableError(
          ref,
          'insecure_permissions',
          `mode ${(stats.mode & 0o777).toString(8)}`,
        );
      if (stats.size > MAX_SECRET_FILE_BYTES) throw new SecretUnavailableError(ref, 'invalid_value');
      const text = await handle.readFile({ encoding: 'utf8' });
      const value = usableSecretValue(text);
      if (value === undefined) throw new SecretUnavailableError(ref, 'invalid_value');
      return value;
    } catch (error) {
      return fail(error);
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }
}
