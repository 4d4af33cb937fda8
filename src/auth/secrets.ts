// Secrets are random and high-entropy, so a plain SHA-256 is the right hash: it is fast to check
// on every request, and there is nothing to brute-force.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function newClientId(): string {
  return `sbz_${randomBytes(12).toString('hex')}`;
}

export function newClientSecret(): string {
  return `sbzsec_${randomBytes(32).toString('base64url')}`;
}

export function newAccessToken(): string {
  return `sbzat_${randomBytes(32).toString('base64url')}`;
}

export function newRefreshToken(): string {
  return `sbzrt_${randomBytes(32).toString('base64url')}`;
}

/** Compares a presented secret with a stored hash in constant time. */
export function secretMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(sha256Hex(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
