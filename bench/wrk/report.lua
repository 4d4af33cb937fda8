-- Loaded by wrk for every bench load (bench/load.ts): when the run ends, one line
-- "WRK_RESULT {...}" with the counters and the latency quantile function in microseconds at
-- 0.5 % steps (bench/stats.ts merges rounds from it; wrk keeps no raw latencies to hand out).
function done(summary, latency, requests)
  local quantiles = {}
  for i = 1, 200 do
    quantiles[i] = string.format("%d", latency:percentile(i * 0.5))
  end
  local e = summary.errors
  io.write(string.format(
    '\nWRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"quantiles_us":[%s]}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, table.concat(quantiles, ",")))
end
