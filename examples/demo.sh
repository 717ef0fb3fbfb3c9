#!/usr/bin/env bash
# `make demo`: a one-minute offline tour of llm_eval. Starts the OFFLINE DEMO
# judge (canned replies, not an LLM), the collector on examples/demo.yaml,
# sends sample GenAI traffic (spans and GenAI log events), shows the
# evaluated spans and calls and the Prometheus metrics, and stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# wait_port HOST PORT NAME: bounded wait for a listening TCP port.
wait_port() {
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  echo "demo: $3 did not start; its log:" >&2
  cat "$dir/$3.log" >&2
  exit 1
}

echo "== 1. Offline demo judge"
bin/llmeval demo-judge -addr 127.0.0.1:18089 >"$dir/judge.log" 2>&1 &
pids+=($!)
wait_port 127.0.0.1 18089 judge
cat "$dir/judge.log"

echo
echo "== 2. otelcol-llmeval on examples/demo.yaml"
LLMEVAL_DEMO_DIR="$dir" bin/otelcol-llmeval --config examples/demo.yaml >"$dir/collector.log" 2>&1 &
pids+=($!)
wait_port 127.0.0.1 13134 collector
wait_port 127.0.0.1 14318 collector

echo
echo "== 3. Sample GenAI traffic (OTLP/HTTP: spans, and GenAI log events for the logs pipeline)"
bin/llmeval traffic -signals traces,logs -endpoint http://127.0.0.1:14318

echo
echo "== 4. Evaluated spans and log-event calls (file exporter output) and Prometheus metrics"
# Wait for all 8 evaluated calls, then for one connector flush after the
# last of them, so the metrics count every result printed.
bin/llmeval results -wait 8 -timeout 60s "$dir/traces.jsonl" "$dir/logs.jsonl" >/dev/null
sleep 2
bin/llmeval results -metrics http://127.0.0.1:18889/metrics "$dir/traces.jsonl" "$dir/logs.jsonl"

echo
echo "Scores and reasons above come from the OFFLINE DEMO JUDGE, not an LLM."
echo "Use a real judge with: OPENAI_API_KEY=... make run   (see README)"
