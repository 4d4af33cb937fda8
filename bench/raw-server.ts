// The serialization floor: a bare node:http server that answers each benchmarked path with the
// document sitebiz gave for it, serialized with JSON.stringify on every request (the document is
// parsed once at start-up), and with sitebiz's status and headers. What sitebiz spends beyond this
// server is routing, authentication, the database and building the document.
// The recorded responses come from a JSON file named on the command line (bench/floor.ts writes
// it). Prints "listening <port>" once it accepts connections on 127.0.0.1. Unknown paths get a
// 404, which the bench counts as a failure.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

export interface RecordedResponse {
  path: string;
  status: number;
  /** Header name/value pairs as sitebiz sent them, without Date and hop-by-hop headers. */
  headers: Array<[string, string]>;
  /** The JSON body as sitebiz sent it. */
  body: string;
}

const file = process.argv[2];
if (!file) throw new Error('usage: raw-server.ts <responses.json>');
const recorded = JSON.parse(readFileSync(file, 'utf8')) as RecordedResponse[];

interface Answer {
  status: number;
  /** Headers before Content-Length, which is computed per response as sitebiz does. */
  headers: Array<[string, string]>;
  document: unknown;
}

const byPath = new Map<string, Answer>(
  recorded.map((r) => [
    r.path,
    { status: r.status, headers: r.headers.filter(([name]) => name.toLowerCase() !== 'content-length'), document: JSON.parse(r.body) as unknown },
  ]),
);

const server = createServer((req, res) => {
  const answer = byPath.get(req.url ?? '');
  if (!answer) {
    res.writeHead(404, { 'content-length': '0' }).end();
    return;
  }
  const body = JSON.stringify(answer.document);
  for (const [name, value] of answer.headers) res.setHeader(name, value);
  res.setHeader('content-length', Buffer.byteLength(body));
  // Node adds Date and Connection itself, as it does for Fastify.
  res.writeHead(answer.status).end(body);
});
server.keepAliveTimeout = 72_000; // Fastify's default, so neither side closes idle bench sockets
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`listening ${address.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
