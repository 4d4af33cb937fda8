// Target 5: sustained POST /v1/contacts, every request a new contact (a unique email), into a
// site made for the purpose so that the measured site keeps its size.
import type { ServerFigures } from './floor.js';
import { runLoad, type LoadGeneratorName } from './load.js';
import type { MemorySampler } from './memory.js';
import type { RunningServer } from './sitebiz-server.js';
import { mergedPercentile } from './stats.js';

export interface WriteOptions {
  generator: LoadGeneratorName;
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export async function measureWrites(server: RunningServer, writeSiteId: string, memory: MemorySampler, options: WriteOptions): Promise<ServerFigures> {
  const document = (email: string) =>
    JSON.stringify({
      data: {
        type: 'contacts',
        attributes: { email, name: 'Bench Writer', subscribed: true },
        relationships: { site: { data: { type: 'sites', id: writeSiteId } } },
      },
    });
  const headers = { authorization: `Bearer ${server.accessToken}`, 'content-type': 'application/vnd.api+json' };
  // One by hand first, so that a refused document is a clear error rather than a failed load.
  await server.api.ok('/v1/contacts', { method: 'POST', headers: { 'content-type': headers['content-type'] }, body: document(`bench-probe-${Date.now()}@example.test`) });

  const spec = {
    label: 'sitebiz POST /v1/contacts',
    url: `${server.baseUrl}/v1/contacts`,
    method: 'POST' as const,
    headers,
    bodyTemplate: document('bench-{{unique}}@example.test'),
    connections: options.connections,
  };
  memory.phase(`${options.connections} connections: POST /v1/contacts`);
  if (options.warmupSeconds > 0) await runLoad(options.generator, { ...spec, seconds: options.warmupSeconds });
  const result = await runLoad(options.generator, { ...spec, seconds: options.seconds });
  memory.pause();
  const figures = {
    rps: result.requests / result.seconds,
    p50: mergedPercentile([result.sketch], 50),
    p99: mergedPercentile([result.sketch], 99),
    requests: result.requests,
  };
  console.log(`    POST /v1/contacts: ${Math.round(figures.rps).toLocaleString('en-US')} req/s, p99 ${figures.p99.toFixed(2)} ms`);
  return figures;
}
