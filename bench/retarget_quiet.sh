#!/usr/bin/env bash
# Run `teleop bench retarget` when the shared machine is quiet, and record date and load with it.
# p99 figures measure preemption as much as code on a busy 2-core box, so wait for the 1-minute
# load average to drop below MAX_LOAD (default 1.0), for at most WAIT_S seconds (default 600).
# Usage: bench/retarget_quiet.sh [extra bench args...]   e.g. --noise-mm 0
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_LOAD=${MAX_LOAD:-1.0}
WAIT_S=${WAIT_S:-600}
load() { cut -d' ' -f1 /proc/loadavg; }
waited=0
while awk -v l="$(load)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }'; do
  if [ "$waited" -ge "$WAIT_S" ]; then echo "# machine not quiet after ${WAIT_S}s (load $(load)); running anyway" >&2; break; fi
  sleep 10; waited=$((waited + 10))
done
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) load before: $(cat /proc/loadavg | cut -d' ' -f1-3)"
echo "# command: .venv/bin/teleop bench retarget --json $*"
.venv/bin/teleop bench retarget --json "$@"
echo "# load after: $(cat /proc/loadavg | cut -d' ' -f1-3)"
