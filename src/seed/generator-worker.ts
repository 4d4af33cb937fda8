// The worker thread of `sitebiz seed`: generates one site's batches on request, so generating
// batch n+1 overlaps with the main thread writing batch n. Messages: the main thread sends
// 'next'; the worker answers { batch, contacts } or { done: true }, or { error } if it fails.
import { parentPort, workerData } from 'node:worker_threads';
import { PeopleGenerator, type SiteJob } from './people-generator.js';

const port = parentPort;
if (!port) throw new Error('generator-worker runs as a worker thread');
let generator: PeopleGenerator | undefined;
port.on('message', () => {
  try {
    generator ??= new PeopleGenerator(workerData as SiteJob);
    const next = generator.nextBatch();
    port.postMessage(next ?? { done: true });
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
