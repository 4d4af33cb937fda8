// `serve --workers N` and GET /metrics: node:cluster hands each connection to one worker, so a
// scrape reaches one worker at random, and that worker's counters are a fraction of the server's.
// The worker that receives /metrics asks the primary over IPC; the primary asks every worker
// for its registries (prom-client's AggregatorRegistry.clusterMetrics) and answers with their
// aggregate: counters and histograms summed, the webhook queue's gauges (every worker reads the
// same database) their maximum, process metrics per prom-client's own aggregators (RSS and heap
// summed, event-loop lag averaged). One scrape is the whole server.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';

const REQUEST = 'sitebiz:metrics-request';
const ANSWER = 'sitebiz:metrics-answer';
/** Longer than prom-client's own 5 s wait for the workers. */
const ANSWER_TIMEOUT_MS = 6_000;

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}

interface MetricsAnswer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

let nextId = 0;
const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
let listening = false;

/** In a worker: the whole server's metrics, from the primary. */
export function askPrimaryForMetrics(): Promise<string> {
  if (!listening) {
    listening = true;
    process.on('message', (message: unknown) => {
      const answer = message as Partial<MetricsAnswer>;
      if (answer?.type !== ANSWER || typeof answer.id !== 'number') return;
      const pending = waiting.get(answer.id);
      if (!pending) return;
      waiting.delete(answer.id);
      clearTimeout(pending.timer);
      if (answer.error !== undefined || answer.text === undefined) pending.reject(new Error(`the primary could not gather the workers' metrics: ${answer.error ?? 'no answer'}`));
      else pending.resolve(answer.text);
    });
  }
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`the primary did not answer a metrics request within ${ANSWER_TIMEOUT_MS} ms`));
    }, ANSWER_TIMEOUT_MS);
    // A request that cannot be sent (the primary is gone) must not keep the process up.
    timer.unref();
    waiting.set(id, { resolve, reject, timer });
    process.send!({ type: REQUEST, id } satisfies MetricsRequest);
  });
}

/**
 * In the primary: answers the workers' metrics requests with the cluster's aggregate. Returns the
 * function that stops answering.
 */
export function answerMetricsRequests(): () => void {
  const aggregator = new AggregatorRegistry();
  const onMessage = (worker: Worker, message: unknown) => {
    const request = message as Partial<MetricsRequest>;
    if (request?.type !== REQUEST || typeof request.id !== 'number') return;
    const id = request.id;
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id, ...answer } satisfies MetricsAnswer);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  };
  cluster.on('message', onMessage);
  return () => cluster.off('message', onMessage);
}
