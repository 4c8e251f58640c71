#!/usr/bin/env bash
# `make test-load`: the tests that hold real-time promises (JACK, MIDI, the screen, remote
# control), run while a CPU hog keeps every core busy at normal priority, as on a musician's
# laptop with a build in the background. Each round runs them all; any failure fails the run.
#   LOAD_ROUNDS (default 3)   rounds in a row
#   LOAD_FILTER               the XCTest filter (default below)
set -uo pipefail
cd "$(dirname "$0")/../.."
rounds=${LOAD_ROUNDS:-3}
filter=${LOAD_FILTER:-'JACK|MIDI|Screen|RemoteControl|RecordingMeter|Mailbox|Loopback|ServerStall'}
cores=$(nproc)
hogs=()
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap stop_hogs EXIT
for _ in $(seq "$cores"); do
  # A busy loop per core at normal priority (nice 0), in its own process.
  ( while :; do :; done ) &
  hogs+=("$!")
done
echo "test-load: $cores busy processes (one per core), $rounds rounds of --filter '$filter'"
failed=0
for round in $(seq "$rounds"); do
  start=$(date +%s)
  log=".build/test-load-$round.log"
  if swift test --skip-build --filter "$filter" >"$log" 2>&1; then result=passed; else result=FAILED; failed=$((failed + 1)); fi
  summary=$(grep -E "Executed [0-9]+ tests" "$log" | tail -1 | sed 's/^[[:space:]]*//')
  echo "round $round: $result in $(( $(date +%s) - start )) s, load $(cut -d' ' -f1 /proc/loadavg): $summary"
  grep -E "error: |: failed" "$log" | head -20
done
echo "test-load: $((rounds - failed)) passed, $failed failed"
[ "$failed" = 0 ]
