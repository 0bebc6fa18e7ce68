/**
 * Encryption of project secrets at rest (SPEC §9): AES-256-GCM (NIST SP 800-38D) with a
 * random 96-bit nonce per value and the secret's `<projectId>/<name>` as additional
 * authenticated data, so a stored value copied under another name or project fails to
 * decrypt. The 256-bit key lives in `<data-dir>/secrets.key`, created once with mode 0600.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { syncDirectoryEntries } from '../../sync-directory.js';

/** File name of the key inside the data directory. */
export const SECRETS_KEY_FILE = 'secrets.key';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

/** Thrown when a stored value cannot be decrypted (another key, or the record was altered). */
export class SecretDecryptionError extends Error {}

/** Errors of `link` on a file system that has no hard links. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Writes a new random key to a temporary file, flushes it, then links it to `file`: the link
 * is atomic and fails when `file` exists, so two servers starting at once end up with one key
 * and a crash never leaves a short key behind (a short key would make every stored secret unreadable).
 */
function createKeyFile(file: string): void {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temporary, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx', flush: true });
    try {
      fs.linkSync(temporary, file);
    } catch (error) {
      // A file system without hard links (some network and FAT mounts): a rename, which replaces
      // nothing here, since the data directory's lock lets one server at a time get this far.
      if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
      if (fs.existsSync(file)) return;
      fs.renameSync(temporary, file);
    }
    syncDirectoryEntries(path.dirname(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Encrypts and decrypts secret values with the data directory's key. */
export class SecretCipher {
  private constructor(private readonly key: Buffer) {}

  /**
   * Reads `<dataDir>/secrets.key`, creating it (mode 0600) when missing; a key is only ever
   * seen whole, so a failed or interrupted creation leaves no key rather than a short one.
   * @throws Error naming the file when it exists with another size than 32 bytes, or is readable by others;
   *   the file system's error (ENOSPC, EACCES…) when a new key cannot be written
   */
  static open(dataDir: string): SecretCipher {
    const file = path.join(dataDir, SECRETS_KEY_FILE);
    if (!fs.existsSync(file)) createKeyFile(file);
    const stat = fs.statSync(file);
    if ((stat.mode & 0o077) !== 0) throw new Error(`${file}: the secrets key is readable by other users (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 on it`);
    const key = fs.readFileSync(file);
    if (key.length !== KEY_BYTES) throw new Error(`${file}: a secrets key holds ${KEY_BYTES} bytes, this file holds ${key.length}; restore it from a backup (stored secrets cannot be read without it)`);
    return new SecretCipher(key);
  }

  /** `v1:<nonce>:<tag>:<ciphertext>` (base64url parts) of `value`, bound to `context`. */
  encrypt(value: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context));
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [FORMAT, nonce.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(':');
  }

  /**
   * The value {@link encrypt} sealed under the same `context`.
   * @throws SecretDecryptionError when the text is malformed, altered, or sealed under another key or context
   */
  decrypt(sealed: string, context: string): string {
    const [format, nonce, tag, ciphertext] = sealed.split(':');
    if (format !== FORMAT || nonce === undefined || tag === undefined || ciphertext === undefined) throw new SecretDecryptionError(`secret ${context}: not a sealed value of format ${FORMAT}`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(`secret ${context}: cannot be decrypted (another secrets.key, or the stored record was altered)`);
    }
  }
}
