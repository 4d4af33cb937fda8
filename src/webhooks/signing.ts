// Standard Webhooks signatures, made by the `standardwebhooks` package (what receivers verify
// with), not by code of our own: `v1,` + base64 HMAC-SHA256 of `webhook-id.timestamp.body`.
import { Webhook } from 'standardwebhooks';

/**
 * The `webhook-signature` header: one `v1,<signature>` per secret, space-separated (a receiver
 * accepts the message when any one verifies), or undefined when there is no secret to sign with.
 */
export function signatureHeader(secrets: readonly string[], webhookId: string, at: Date, body: string): string | undefined {
  if (secrets.length === 0) return undefined;
  return secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body)).join(' ');
}
