import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * Secrets of third parties at rest (the providers' access and refresh tokens, PKCE verifiers): AES-256-GCM with a
 * fresh 96-bit IV per value, so the database alone reveals nothing and any change to a stored value is detected.
 * Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url), the version leaving room for a key rotation.
 */
export interface SecretBox {
  seal(plain: string): string;
  /** Throws when the value was not sealed with this key, or was changed. */
  open(sealed: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('the token encryption key must be 32 bytes');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

const KEY_FILE = 'token-encryption.key';

/**
 * The key: TOKEN_ENCRYPTION_KEY when set (required in production), else one generated once and kept, owner-only,
 * under the data directory, so a development machine needs no setup and keeps reading what it stored.
 */
export async function loadSecretKey(configured: Buffer | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return configured;
  const file = path.resolve(dataDir, KEY_FILE);
  if (existsSync(file)) return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
  const key = randomBytes(32);
  await fs.mkdir(dataDir, { recursive: true });
  // `wx`: two processes starting at once must not each write a different key.
  await fs.writeFile(file, key.toString('base64'), { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64');
}
