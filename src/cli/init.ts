// `sitebiz init`: an account, its owner and a site on a new database (the demo data by default),
// and a new key with every permission.
import { initialize } from '../domain/initialize.js';
import { configFrom, report, requiredInt, serverBaseUrl, UsageError, withDatabase, type Command } from './command.js';
import { credentialLines } from './credentials.js';

export const initCommand: Command = {
  usage: 'sitebiz init [--demo [--contacts N]|--empty] [--json] [config flags]',
  options: { demo: { type: 'boolean' }, empty: { type: 'boolean' }, contacts: { type: 'string' } },
  async run(values) {
    if (values.demo && values.empty) throw new UsageError('choose one of --demo and --empty');
    if (values.contacts !== undefined && values.empty) throw new UsageError('--contacts sizes the demo data; it does not go with --empty');
    const contacts = values.contacts === undefined ? undefined : requiredInt(values, 'contacts');
    if (contacts !== undefined && (contacts < 60 || contacts > 2_000_000)) {
      throw new UsageError('--contacts takes a number from 60 (the demo set) to 2000000');
    }
    const config = configFrom(values);
    const result = await withDatabase(config, async (h) =>
      initialize(h, { demo: !values.empty, baseUrl: await serverBaseUrl(values, config, h), ...(contacts ? { demoContacts: contacts } : {}) }),
    );
    const { created, ...json } = result;
    report(values, json, [
      created ? 'Created an account, its owner and a site.' : 'The account exists; created a new API key for its owner.',
      ...credentialLines(result),
    ]);
  },
};
