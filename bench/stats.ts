// Percentiles, and a latency summary that can be merged across rounds. wrk only reports
// percentiles (not the raw latencies), so each round is kept as its quantile function at fixed
// steps, and rounds merge as weighted samples of it: exact at the steps, and p50/p99 are steps.

/** Step of the kept quantile function, in percent: 0.5, 1.0, ..., 100. */
export const QUANTILE_STEP = 0.5;
export const QUANTILE_POINTS = 100 / QUANTILE_STEP;

export interface LatencySketch {
  requests: number;
  /** quantilesMs[i] is the latency (ms) at percentile (i + 1) * QUANTILE_STEP. */
  quantilesMs: number[];
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(values: number[]): number {
  return percentile(Float64Array.from(values).sort(), 50);
}

export function sketchOf(latenciesMs: number[]): LatencySketch {
  const sorted = Float64Array.from(latenciesMs).sort();
  const quantilesMs = Array.from({ length: QUANTILE_POINTS }, (_, i) => percentile(sorted, (i + 1) * QUANTILE_STEP));
  return { requests: latenciesMs.length, quantilesMs };
}

/** The percentile `p` of several rounds together, each weighted by its number of requests. */
export function mergedPercentile(sketches: LatencySketch[], p: number): number {
  const points: Array<{ ms: number; weight: number }> = [];
  let total = 0;
  for (const sketch of sketches) {
    if (sketch.requests === 0) continue;
    const weight = sketch.requests / sketch.quantilesMs.length;
    for (const ms of sketch.quantilesMs) points.push({ ms, weight });
    total += sketch.requests;
  }
  if (total === 0) return Number.NaN;
  points.sort((a, b) => a.ms - b.ms);
  const wanted = (p / 100) * total;
  let seen = 0;
  for (const point of points) {
    seen += point.weight;
    // A tolerance for the float sum, so that p = 100 finds the last point.
    if (seen >= wanted - 1e-9 * total) return point.ms;
  }
  return points[points.length - 1]!.ms;
}

/** Every order of `items`: rounds that take each in turn let a shared machine's drift hit each alike. */
export function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

/** The median of ratios, with their range: "1.02 (0.97–1.08)". */
export const ratioText = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(values).toFixed(2)} (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
};
