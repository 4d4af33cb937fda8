// `sitebiz serve`: the server (src/server.ts), with its workers when --workers asks for them.
import { settingSource } from '../config.js';
import { configFrom, flagsFrom, type Command } from './command.js';

export const serveCommand: Command = {
  usage: 'sitebiz serve [--json] [config flags]',
  details: [
    'Checks that the port is free before touching the database. --json: once serving, one line with an object',
    '(serving, docs, database, and credentials on the first run, else null); the other lines are the JSON log.',
  ],
  options: {},
  async run(values) {
    // Loaded here, so that `serve --help` does not load the whole server.
    const { serve } = await import('../server.js');
    await serve(configFrom(values), { json: values.json === true, databaseSource: settingSource('databaseUrl', process.env, flagsFrom(values)) });
  },
};
