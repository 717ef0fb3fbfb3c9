# llm_eval: build, test and run. `make test` is what CI runs (.ci/run).
SHELL := bash
GO ?= go
OCB_VERSION := v0.165.0
TOOLS_BIN := $(CURDIR)/.tools/bin
OCB := $(TOOLS_BIN)/builder
COLLECTOR := bin/otelcol-llmeval
LLMEVAL := bin/llmeval

# Every non-test Go source and module file the binaries depend on.
GO_SOURCES := $(shell find . -name '*.go' -not -name '*_test.go' -not -path './_build/*' -not -path './.tools/*' -not -path './tools/*' -not -path './test/*') go.mod go.sum

.PHONY: all build tools promtool prometheus-server generate run test version-check unit-test bench-smoke rules-test e2e e2e-kafka bench-kafka e2e-prometheus clients-install e2e-clients clients-samples mastra-reference demo load clean

all: build

build: $(COLLECTOR) $(LLMEVAL)

# ocb pinned to the collector line of go.mod; installed locally, not assumed on PATH.
$(OCB):
	GOBIN=$(TOOLS_BIN) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

$(COLLECTOR): builder-config.yaml $(GO_SOURCES) | $(OCB)
	$(OCB) --config builder-config.yaml
	@mkdir -p bin
	cp _build/otelcol-llmeval $@.tmp && mv -f $@.tmp $@  # mv: works while the old binary runs

$(LLMEVAL): $(GO_SOURCES)
	@mkdir -p bin
	$(GO) build -o $@ ./cmd/llmeval

# promtool and the prometheus server come from Debian's prometheus package;
# installed when missing and root on a Debian-like system, else explained.
PROMETHEUS_HELP := install Prometheus (Debian/Ubuntu: sudo apt-get install prometheus; other systems: the release archive from https://prometheus.io/download/, with promtool and prometheus on PATH; LLMEVAL_PROMETHEUS may name the server binary) and retry

promtool:
	@if ! command -v promtool >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus; \
	  else \
	    echo "promtool not found: $(PROMETHEUS_HELP)" >&2; exit 1; \
	  fi; \
	fi

prometheus-server:
	@if [ -z "$${LLMEVAL_PROMETHEUS:-}" ] && ! command -v prometheus >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus; \
	  else \
	    echo "prometheus not found: $(PROMETHEUS_HELP)" >&2; exit 1; \
	  fi; \
	fi

tools: $(OCB) promtool prometheus-server

# Regenerate mdatagen output (mdatagen pinned at v0.159.0 in tools/: the module
# proxy refuses every later version, so it stays behind the Collector line).
generate:
	$(GO) -C tools tool mdatagen "$(CURDIR)/processor/llmevalprocessor/metadata.yaml"
	$(GO) -C tools tool mdatagen "$(CURDIR)/connector/llmevalmetricsconnector/metadata.yaml"
	$(GO) -C tools tool mdatagen "$(CURDIR)/connector/llmevaleventsconnector/metadata.yaml"

# The judge comes from the environment, so OpenAI, Ollama or vLLM work unchanged:
#   OPENAI_API_KEY, LLMEVAL_JUDGE_ENDPOINT (default https://api.openai.com/v1),
#   LLMEVAL_JUDGE_MODEL (default gpt-4o-mini). Builds bin/llmeval too, for the
#   README's next steps (llmeval traffic, llmeval results).
run: $(COLLECTOR) $(LLMEVAL)
	@endpoint="$${LLMEVAL_JUDGE_ENDPOINT:-https://api.openai.com/v1}"; \
	if [ -z "$${OPENAI_API_KEY:-}" ] && [[ "$$endpoint" == *api.openai.com* ]]; then \
	  echo "warning: OPENAI_API_KEY is not set; judge calls to $$endpoint will fail (set it, or LLMEVAL_JUDGE_ENDPOINT for a local judge)" >&2; \
	fi
	$(COLLECTOR) --config examples/collector.yaml $${OTLP_EXPORT_ENDPOINT:+--config examples/otlp-export.yaml}

test: version-check unit-test bench-smoke rules-test mastra-reference e2e e2e-kafka e2e-prometheus e2e-clients

# go.mod, builder-config.yaml and OCB_VERSION on one Collector release line,
# and the built collector too: every Collector module in it on that line, and
# core at go.mod's versions whatever the manifest's components pull in.
version-check: $(COLLECTOR)
	LLMEVAL_COLLECTOR=$(CURDIR)/$(COLLECTOR) $(GO) test -count=1 -v -run '^(TestRepositoryIsOnOneLine|TestBuiltCollectorIsOnTheLine)$$' ./internal/versionline/

unit-test:
	$(GO) test -race ./...

# One iteration of every benchmark, so a benchmark that breaks fails CI.
# The figures in BENCHMARKS.md come from longer runs (see there).
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

rules-test: promtool
	promtool check rules examples/alerts.yaml examples/kafka-alerts.yaml
	promtool test rules examples/alerts_test.yaml examples/kafka-alerts_test.yaml

e2e: $(COLLECTOR)
	LLMEVAL_COLLECTOR=$(CURDIR)/$(COLLECTOR) $(GO) test -race -tags e2e -count=1 -timeout 10m ./test/e2e/...

# The Kafka recipe of docs/scaling.md on loopback: a kfake broker
# (test/kafkabroker, its own module, built by the test), the built collector
# as tier 1 (examples/kafka-tier1.yaml) and up to three evaluation replicas
# (examples/collector.yaml + otlp-export.yaml + kafka-evaluation-tier.yaml):
# a replica joining, stable membership, kill -9 of a replica, the broker down
# at start and gone mid-stream, records that are not OTLP, an idle replica.
# About two minutes.
e2e-kafka: $(COLLECTOR)
	LLMEVAL_COLLECTOR=$(CURDIR)/$(COLLECTOR) $(GO) test -race -tags e2e,kafka -count=1 -v -timeout 10m -run '^TestKafka' ./test/e2e/

# Evaluations per second with 1, 2 and 3 replicas of that recipe against a
# fake judge of fixed latency and fixed per-replica concurrency, and their
# ratio to linear (BENCHMARKS.md, "Scaling out"). Not part of `make test`.
bench-kafka: $(COLLECTOR)
	LLMEVAL_COLLECTOR=$(CURDIR)/$(COLLECTOR) $(GO) test -tags e2e,kafka -count=1 -run '^$$' -bench '^BenchmarkKafkaScaling$$' -benchtime 1x -timeout 20m ./test/e2e/

# examples/alerts.yaml in a real Prometheus server scraping the built
# collector: a burst of bad answers fires the bias and hallucination alerts,
# good traffic resolves them; every Grafana dashboard query returns data.
# Prints the alerts' pending, firing and resolved times.
e2e-prometheus: $(COLLECTOR) prometheus-server
	LLMEVAL_COLLECTOR=$(CURDIR)/$(COLLECTOR) $(GO) test -race -tags e2e,prometheus -count=1 -v -timeout 5m -run '^TestAlertsInRealPrometheus$$' ./test/e2e/

# Real instrumentation libraries (Node apps in test/clients/apps, one package
# and package-lock.json each, plus node@22 in test/clients) against the built
# collector (see test/clients/README.md). Needs npm and the npm registry.
CLIENTS := test/clients
CLIENT_APPS := $(wildcard $(CLIENTS)/apps/*)

clients-install:
	cd $(CLIENTS) && npm ci
	set -e; for app in $(CLIENT_APPS); do (cd $$app && npm ci); done

e2e-clients: $(COLLECTOR) clients-install
	LLMEVAL_COLLECTOR=$(CURDIR)/$(COLLECTOR) $(GO) test -race -tags clients -count=1 -timeout 20m ./$(CLIENTS)/...

# Store what each library sends in testdata/otlp/clients/<app>/ (no collector).
clients-samples: clients-install
	$(GO) test -tags clients -count=1 -timeout 10m -run 'TestClients|TestConversations' ./$(CLIENTS)/ -update-samples

# Mastra's own bias, hallucination, answer relevancy, context relevance and
# toxicity scorers (npm @mastra/evals, on the node@22 of test/mastra) and
# ours on the same scripted verdicts: the scores must be equal (see test/mastra/README.md). Needs npm and the npm registry.
MASTRA := test/mastra

mastra-reference:
	cd $(MASTRA) && npm ci --no-audit --no-fund
	$(GO) test -race -tags mastra -count=1 ./$(MASTRA)/...

demo: build
	examples/demo.sh

# Load runs (minutes; not part of `make test`): the built collector at
# 10,000 spans/s without and with llm_eval, through a judge outage and under
# never-finishing agent traces (scenario unfinished, small trace_context limits).
# LOAD_FLAGS passes flags to test/load, e.g. LOAD_FLAGS="-sampling 1 -duration 30s"
# or LOAD_FLAGS="-shape rag -scenarios baseline,llm_eval,unfinished" (agent/RAG traces),
# or LOAD_FLAGS="-duration 200s -windows 20s -scenarios llm_eval" (CPU per evaluated
# generation measured inside one process).
load: $(COLLECTOR)
	$(GO) run ./test/load -collector $(COLLECTOR) $(LOAD_FLAGS)

clean:
	rm -rf bin _build
