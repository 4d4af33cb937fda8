// How a new key is handed to a person, by `init` and by `serve` on a new database.
import { tokenRequestCommand } from '../auth/oauth-routes.js';
import type { InitResult } from '../domain/initialize.js';

/** The lines that hand a new key to a person: the ids, the secret and a curl line for a token. */
export function credentialLines(result: InitResult): string[] {
  return [
    `Base URL:      ${result.base_url}`,
    `Site id:       ${result.site_id}`,
    `client_id:     ${result.client_id}`,
    `client_secret: ${result.client_secret}`,
    'Get a token:',
    `  ${tokenRequestCommand(result.base_url, result.client_id, result.client_secret)}`,
    ...(result.sign_in_url ? [`Console:       ${result.sign_in_url}`, '               (a one-time sign-in link for the owner, valid 15 minutes)'] : []),
  ];
}
