# humanpass: `make up` runs the whole stack locally with demo data; `make test` runs every test.
# Both install what they need first (node_modules from the lock file, Postgres and NATS when none answer).
SHELL := /bin/bash
.DEFAULT_GOAL := help
export DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres
export NATS_URL ?= nats://127.0.0.1:4222
# The Node of .node-version: the machine's own when it is that major line, else the one scripts/ensure-node.sh
# fetched from the npm registry into .run/node.
export PATH := $(CURDIR)/.run/node/bin:$(PATH)

.PHONY: help node deps infra up down demo test test-unit test-soak lint build bench perf-check migrate reindex clean compose-up compose-down test-compose test-compose-cluster test-release bench-compose images

help:
	@echo "make up       run the whole stack locally with demo data (Ctrl-C or make down to stop)"
	@echo "make demo     an agent walks through the product against the running stack"
	@echo "make test     all tests against real Postgres and NATS (starts them when none answer)"
	@echo "make test-soak  the stack for 3 minutes at a fixed mixed load: exact counts, no pool, fd or timer leak"
	@echo "make lint     biome + package boundaries + TypeScript type-check + deployment manifests + alert rules"
	@echo "make bench    benchmarks (figures printed, not asserted), after make perf-check"
	@echo "make perf-check  the query plans the benchmarks rest on (generic plans, index use); fails when they change"
	@echo "make down     stop what make up started"
	@echo "make compose-up    the stack in containers on your Docker engine, upstream images pulled (local stand-ins"
	@echo "                   when no registry answers; REPLICAS=2 for two of every service); make demo then runs against it"
	@echo "make compose-down  remove the containers (the engine keeps running)"
	@echo "make test-compose  the stack in containers with 2 replicas each, under faults; prints its invariants"
	@echo "make test-compose-cluster  the stack on a 3-node NATS cluster (streams at 3 replicas), its leaders killed"
	@echo "                   and a node paused under a workload; prints each fault's figures and the invariants"
	@echo "make images   the six service images tagged <version> and <version>-<commit>, SBOMs in .run/images;"
	@echo "              PUSH=1 REGISTRY=<registry>/humanpass pushes them and prints the prod overlay's values.env lines"
	@echo "make test-release  make images PUSH=1 against a registry on loopback: digests served, labels, SBOMs, and the"
	@echo "                   prod overlay validated with the printed lines"

node:
	@bash scripts/ensure-node.sh

deps: node
	@bash scripts/ensure-deps.sh

infra: deps
	@bash scripts/ensure-infra.sh

# Every lib, service and tool to its dist/ (tsc -b: only what changed since the last build is compiled again), then
# each service bundled to dist/service.js (again only when one of its inputs changed).
build: deps
	@node scripts/build.mjs

lint: deps
	npx biome check .
	npx depcruise --config .dependency-cruiser.cjs --output-type err bench deploy libs services tools scripts
	npx tsc -p tsconfig.json --noEmit
	@if node -e 'process.exit(require("./package.json").scripts["validate:deploy"] ? 0 : 1)'; then npm run -s validate:deploy; fi
	@promtool="$$(bash scripts/ensure-promtool.sh)" && "$$promtool" check rules deploy/observability/alerts.yml deploy/observability/postgres-alerts.yml && \
	  "$$promtool" check config --syntax-only deploy/observability/prometheus.yml

# Both need the nats-server binary: tests and make up start nats-servers of their own (scripts/ensure-infra.sh).
test up: export HUMANPASS_NEEDS_NATS_SERVER = 1

test: infra build
	@if [ -x services/verifier/scripts/ensure-chromium.sh ]; then bash services/verifier/scripts/ensure-chromium.sh; fi
	@mkdir -p .run
	npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=.run/vitest.json; status=$$?; \
	  node scripts/test-summary.mjs .run/vitest.json; exit $$status

# The soak driver of `npm run bench -- soak` for 3 minutes on a stack of its own; asserts the exact counts and that
# no pool connection, file descriptor or timer leaks (the soak project of vitest.config.ts).
test-soak: infra build
	npx vitest run --project soak --reporter=verbose

up: infra build
	@echo "node $$(node -v) ($$(command -v node))"
	@node --enable-source-maps tools/stack/dist/up.js

# Against `make up` when it runs, else against `make compose-up`'s stack.
demo: build
	@if [ ! -f .run/stack.json ] && [ -f .run/compose-stack.json ]; then export HUMANPASS_STACK_FILE=.run/compose-stack.json; fi; \
	  node --enable-source-maps tools/stack/dist/demo.js

down:
	@if [ -f tools/stack/dist/down.js ]; then node tools/stack/dist/down.js; fi
	@bash scripts/stop-infra.sh

images: deps
	@bash scripts/images.sh

test-release: build
	@bash scripts/test-release.sh

compose-up: deps
	@bash scripts/compose/up.sh

compose-down:
	@bash scripts/compose/down.sh

test-compose: build
	@bash scripts/compose/test.sh

test-compose-cluster: build
	@bash scripts/compose/test-cluster.sh

# Against the stack of make compose-up: the same flows with 1, then 2 replicas of every service.
bench-compose: deps
	@source scripts/compose/env.sh && node --conditions=@humanpass/source tools/stack/src/compose-test/bench.ts

migrate: infra build
	DATABASE_URL=$${HUMANPASS_DATABASE_URL:-$${DATABASE_URL%/*}/humanpass} node deploy/migrate/run.mjs
	node deploy/migrate/topology.mjs

# Rebuilds attestations-api's read model from its streams (stop the service first): in the database of make up and
# make migrate; as the attestations-api-reindex NATS user when NATS_ATTESTATIONS_API_REINDEX_PASSWORD is set (a NATS
# that loads users.conf: make up's, NATS_URL=nats://127.0.0.1:14222 with dev-attestations-api-reindex). It creates and
# changes no stream. In Kubernetes: the attestations-api-reindex CronJob (docs/deploy.md).
reindex: infra build
	@if [ -n "$$NATS_ATTESTATIONS_API_REINDEX_PASSWORD" ]; then export NATS_USER=attestations-api-reindex NATS_PASSWORD="$$NATS_ATTESTATIONS_API_REINDEX_PASSWORD"; fi; \
	  DATABASE_URL=$${HUMANPASS_DATABASE_URL:-$${DATABASE_URL%/*}/humanpass} npm run -w @humanpass/attestations-api reindex

bench: perf-check build
	node --conditions=@humanpass/source bench/run.ts

perf-check: infra build
	node --conditions=@humanpass/source bench/attestations-api/plans.ts

clean:
	rm -rf .run node_modules */*/dist */*/*.tsbuildinfo
