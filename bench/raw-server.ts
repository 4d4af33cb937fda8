// The ceiling: a bare node:http server answering each benchmarked path with the bytes and headers
// sitebiz gave for it (recorded by bench/run.ts into a JSON file named on the command line).
// Prints "listening <port>" once it accepts connections on 127.0.0.1. Unknown paths get a 404,
// which the bench counts as a failure.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

export interface RecordedResponse {
  path: string;
  status: number;
  /** Header name/value pairs as sitebiz sent them, without Date and hop-by-hop headers. */
  headers: Array<[string, string]>;
  bodyBase64: string;
}

const file = process.argv[2];
if (!file) throw new Error('usage: raw-server.ts <responses.json>');
const recorded = JSON.parse(readFileSync(file, 'utf8')) as RecordedResponse[];
const byPath = new Map(
  recorded.map((r) => [r.path, { status: r.status, headers: r.headers.flat(), body: Buffer.from(r.bodyBase64, 'base64') }]),
);

const server = createServer((req, res) => {
  const response = byPath.get(req.url ?? '');
  if (!response) {
    res.writeHead(404, { 'content-length': '0' }).end();
    return;
  }
  // Node adds Date and Connection itself, as it does for Fastify.
  res.writeHead(response.status, response.headers).end(response.body);
});
server.keepAliveTimeout = 72_000; // Fastify's default, so neither side closes idle bench sockets
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`listening ${address.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
