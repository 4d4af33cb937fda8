// `sitebiz serve --workers N`, run as users run it: `node bin/sitebiz.js serve` in a child process,
// on a database of its own (a SQLite file; on PostgreSQL a fresh database next to
// TEST_DATABASE_URL's). Which process answered a request is read from the JSON log lines, which
// carry the pid of the process that wrote them and the request id we sent (X-Request-Id): the API
// gains nothing for the test.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DIALECTS } from './support/harness.js';
import { freePort, freshDatabase, request, startServe as startServeIn, type ServeProcess as Server } from './support/serve-process.js';

const scratch = mkdtempSync(join(tmpdir(), 'sitebiz-workers-cwd-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const startServe = (args: string[], env: Record<string, string> = {}): Server => startServeIn(scratch, args, env);

/** Polls until `find` returns a value (the log lines of several processes arrive in any order). */
async function until<T>(server: Server, what: string, find: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms; stdout:\n${server.stdout}\nstderr:\n${server.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pids that answered these requests, once every one has logged its completion. */
async function answerers(server: Server, requestIds: string[]): Promise<number[]> {
  return until(server, `completion lines of ${requestIds.join(', ')}`, () => {
    const pids = requestIds.map((id) => answeredBy(server, id));
    return pids.every((pid) => pid !== undefined) ? (pids as number[]) : undefined;
  });
}

/** The pid that logged the completion of the request with this id. */
function answeredBy(server: Server, requestId: string): number | undefined {
  return server.logs().find((line) => line.reqId === requestId && line.msg === 'request completed')?.pid;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

for (const dialect of DIALECTS) {
  describe(`serve --workers [${dialect}]`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const cleanup of cleanups) await cleanup();
    });

    it('two workers answer on one port, share tokens through the database, are replaced when they die, and stop on SIGTERM', async () => {
      const db = await freshDatabase(dialect);
      cleanups.push(db.cleanup);
      let port = 0;
      let server: Server | undefined;
      // A port found free can be taken before the workers listen (the machine is busy with other
      // tests); then start over on a fresh database, since the first start seeds it.
      for (let attempt = 1; !server; attempt++) {
        port = await freePort();
        const candidate = startServe(['--workers', '2', '--port', String(port), '--database-url', db.url]);
        try {
          await candidate.waitFor(/sitebiz is serving .*\n/);
          server = candidate;
        } catch (error) {
          // Exited on its own (a port taken), or still running after waitFor gave up.
          await candidate.stop('SIGKILL');
          if (!/EADDRINUSE/.test(candidate.stderr) || attempt === 3) throw error;
          const again = await freshDatabase(dialect);
          cleanups.push(again.cleanup);
          db.url = again.url;
        }
      }

      let stopped = false;
      try {
        const primaryPid = server.child.pid!;
        assert.match(server.stdout, new RegExp(`sitebiz is serving http://127\\.0\\.0\\.1:${port}/v1 with 2 workers`));
        // The primary set the database up once: one demo account, one set of credentials.
        assert.equal(server.stdout.match(/created the demo account/g)?.length, 1, server.stdout);
        assert.equal(server.stdout.match(/client_secret:/g)?.length, 1, server.stdout);
        const clientId = /client_id:\s+(\S+)/.exec(server.stdout)![1]!;
        const clientSecret = /client_secret:\s+(\S+)/.exec(server.stdout)![1]!;

        // Each worker's log line comes through its own pipe: the primary's "serving" line can
        // come before a busy worker's "Server listening" has been read.
        await server.waitFor(/Server listening at[\s\S]*Server listening at/);
        const listening = server.logs().filter((line) => line.msg.startsWith('Server listening at'));
        const workerPids = new Set(listening.map((line) => line.pid));
        assert.equal(workerPids.size, 2, 'two workers listen');
        assert.ok(!workerPids.has(primaryPid), 'the primary does not listen itself');
        assert.deepEqual(new Set(server.logs().map((line) => line.pid)), new Set([primaryPid, ...workerPids]), 'three processes');

        const tokenResponse = await request(port, {
          method: 'POST',
          path: '/v1/oauth/token',
          requestId: 'token-grant',
          form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
        });
        assert.equal(tokenResponse.status, 200, tokenResponse.body);
        const token = (JSON.parse(tokenResponse.body) as { access_token: string }).access_token;

        // Many concurrent requests, each on its own connection: every one succeeds, and both
        // workers answer some, so the token issued by one worker works on the other.
        const ids = Array.from({ length: 30 }, (_, i) => `round-one-${i}`);
        const responses = await Promise.all(
          ids.map((requestId, i) =>
            request(port, { path: i % 2 === 0 ? '/v1/me' : '/v1/contacts?page[size]=5', requestId, token }),
          ),
        );
        for (const response of responses) assert.equal(response.status, 200, response.body);
        const [issuer] = await answerers(server, ['token-grant']);
        assert.ok(issuer !== undefined && workerPids.has(issuer), 'a worker issued the token');
        assert.deepEqual(new Set(await answerers(server, ids)), workerPids, 'both workers answered');

        // A worker that dies is replaced; the other serves meanwhile.
        const victim = [...workerPids].find((pid) => pid !== issuer)!;
        process.kill(victim, 'SIGKILL');
        await server.waitFor(/worker died; replacing it/);
        const died = server.logs().find((line) => line.msg === 'worker died; replacing it')!;
        assert.equal(died.workerPid, victim);
        assert.equal(died.exit, 'on signal SIGKILL');
        const during = await request(port, { path: '/v1/me', requestId: 'while-replacing', token });
        assert.equal(during.status, 200);
        const replacement = await until(server, 'a replacement worker listening', () =>
          server!.logs().find((line) => line.msg.startsWith('Server listening at') && !workerPids.has(line.pid))?.pid,
        );
        assert.equal(isRunning(victim), false);

        const again = Array.from({ length: 12 }, (_, i) => `round-two-${i}`);
        const secondResponses = await Promise.all(again.map((requestId) => request(port, { path: '/v1/me', requestId, token })));
        for (const response of secondResponses) assert.equal(response.status, 200, response.body);
        assert.ok(
          (await answerers(server, again)).includes(replacement),
          'the replacement answers with the token issued before it started',
        );

        stopped = true;
        const exit = await server.stop();
        assert.deepEqual(exit, { code: 0, signal: null }, `SIGTERM stops serve cleanly; stderr:\n${server.stderr}`);
        for (const pid of [issuer, replacement, primaryPid]) assert.equal(isRunning(pid), false, `process ${pid} is gone`);
        assert.match(server.stdout, /every worker stopped/);
        const shutdowns = server.logs().filter((line) => line.msg.startsWith('shutting down: no new connections'));
        assert.deepEqual(new Set(shutdowns.map((line) => line.pid)), new Set([issuer, replacement]), 'each worker closed gracefully');
      } finally {
        if (!stopped) await server.stop();
      }
    });
  });
}

describe('serve --workers: bad values', { concurrency: 3 }, () => {
  const CASES: Array<[string[], Record<string, string>, RegExp]> = [
    [['--workers', '0'], {}, /--workers must be auto \(one per core\) or a whole number from 1 to 256, got "0"/],
    [['--workers', 'many'], {}, /--workers must be auto .* got "many"/],
    [[], { WORKERS: '2.5' }, /WORKERS must be auto .* got "2\.5"/],
  ];
  for (const [args, env, message] of CASES) {
    it(`${JSON.stringify({ args, env })} exits 2 naming the setting, before touching the database`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sitebiz-workers-bad-'));
      try {
        const server = startServe([...args, '--database-url', `sqlite:${join(dir, 'db.sqlite')}`], env);
        const exit = await server.exited;
        assert.equal(exit.code, 2, server.stderr);
        assert.match(server.stderr, /invalid configuration/);
        assert.match(server.stderr, message);
        assert.equal(server.stdout, '', 'nothing served, nothing logged');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
