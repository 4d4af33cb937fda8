#!/usr/bin/env bash
# Restarts the local PostgreSQL cluster while a running sitebiz (on that PostgreSQL) is asked for a
# page every 100 ms, and prints how many answers had each status, before, during and after the
# restart. Expected: 200s, then 503s (with Retry-After) while PostgreSQL is down, then 200s again
# without restarting sitebiz; never a 500 and never a request left hanging (each has 15 s).
#
#   scripts/pg-outage.sh <base-url> <access-token> [seconds-after-restart]
#   scripts/pg-outage.sh http://127.0.0.1:3000 sbzat_... 10
#
# Run it as root or as the postgres user, on a machine where nobody else uses that PostgreSQL: the
# restart breaks every other client's connections (test/database-outage.test.ts shows the same
# through a proxy, without touching the server).
set -euo pipefail

base=${1:?usage: pg-outage.sh <base-url> <access-token> [seconds-after-restart]}
token=${2:?usage: pg-outage.sh <base-url> <access-token> [seconds-after-restart]}
after=${3:-10}
version=$(ls /etc/postgresql | sort -V | tail -n 1)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# One line per request: the phase, the status (000: no answer), Retry-After, the seconds it took.
probe() {
  local phase=$1
  local out
  out=$(curl -s -o /dev/null -m 15 -D - -w 'STATUS %{http_code} %{time_total}\n' \
    -H "Authorization: Bearer $token" "$base/v1/contacts?page%5Bsize%5D=5" || true)
  local status time retry
  status=$(printf '%s\n' "$out" | awk '/^STATUS/ {print $2}')
  time=$(printf '%s\n' "$out" | awk '/^STATUS/ {print $3}')
  retry=$(printf '%s\n' "$out" | awk 'tolower($1) == "retry-after:" {gsub("\r", "", $2); print $2}')
  echo "$phase ${status:-000} ${retry:--} ${time:-0}" >>"$log"
}

# Requests go on in the background through the whole run.
phase_file=$(mktemp)
trap 'rm -f "$log" "$phase_file"' EXIT
echo before >"$phase_file"
(
  while [ -s "$phase_file" ]; do
    probe "$(cat "$phase_file")" &
    sleep 0.1
  done
  wait
) &
prober=$!

sleep 3
echo during >"$phase_file"
echo "restarting PostgreSQL $version/main ..."
started=$(date +%s.%N)
pg_ctlcluster --skip-systemctl-redirect "$version" main restart
echo "restarted in $(echo "$(date +%s.%N) - $started" | bc) s"
echo after >"$phase_file"
sleep "$after"
: >"$phase_file"
wait "$prober"

echo
echo "phase   status  retry-after  answers  slowest(s)"
sort "$log" | awk '{key=$1" "$2" "$3; n[key]++; if ($4 > max[key]) max[key]=$4}
  END {for (k in n) {split(k, p, " "); printf "%-7s %-7s %-12s %-8d %s\n", p[1], p[2], p[3], n[k], max[k]}}' | sort
if grep -q ' 500 ' "$log"; then echo "FAIL: 500 answers" >&2; exit 1; fi
if grep -q ' 000 ' "$log"; then echo "FAIL: requests without an answer" >&2; exit 1; fi
if ! grep -q '^after 200 ' "$log"; then echo "FAIL: no 200 after the restart" >&2; exit 1; fi
echo "OK: no 500, every request answered, served again after the restart"
