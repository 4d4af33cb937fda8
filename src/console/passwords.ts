// Console passwords: scrypt from node:crypto (memory-hard, no native package to build), with the
// parameters OWASP's Password Storage Cheat Sheet gives for scrypt: N = 2^17 (128 MiB of memory
// per hash), r = 8, p = 1, a 16-byte random salt and a 32-byte key. The stored form names its
// parameters, so they can be raised later and old hashes still verify:
//   scrypt$<log2 N>$<r>$<p>$<salt, base64url>$<key, base64url>
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const SCRYPT_PARAMETERS = { log2N: 17, r: 8, p: 1, saltBytes: 16, keyBytes: 32 } as const;

/** Passwords shorter than this are refused (NIST SP 800-63B's minimum is 8). */
export const MIN_PASSWORD_LENGTH = 10;
/** Longer input is refused rather than hashed: nobody types more, and it bounds the work. */
export const MAX_PASSWORD_LENGTH = 1024;

export class PasswordPolicyError extends Error {}

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number, keyBytes: number): Promise<Buffer> {
  const N = 2 ** log2N;
  // scrypt needs 128 * N * r bytes; Node refuses above 32 MiB unless told.
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** Checks a new password against the policy; throws PasswordPolicyError saying what is wrong. */
export function checkPasswordPolicy(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new PasswordPolicyError(`a password needs at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new PasswordPolicyError(`a password has at most ${MAX_PASSWORD_LENGTH} characters`);
}

export async function hashPassword(password: string): Promise<string> {
  checkPasswordPolicy(password);
  const { log2N, r, p, saltBytes, keyBytes } = SCRYPT_PARAMETERS;
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, log2N, r, p, keyBytes);
  return ['scrypt', log2N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const STORED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/**
 * Whether the password matches the stored hash. With no hash (an unknown email, a user without a
 * password) it still spends the time of one hash, so the answer's timing does not tell them apart.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const match = stored ? STORED.exec(stored) : null;
  if (!match) {
    const { log2N, r, p, saltBytes, keyBytes } = SCRYPT_PARAMETERS;
    await derive(password, Buffer.alloc(saltBytes), log2N, r, p, keyBytes);
    return false;
  }
  const [, log2N, r, p, salt, key] = match;
  const expected = Buffer.from(key!, 'base64url');
  const actual = await derive(password, Buffer.from(salt!, 'base64url'), Number(log2N), Number(r), Number(p), expected.length);
  return timingSafeEqual(actual, expected);
}
