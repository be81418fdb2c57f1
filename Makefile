# lockbench: `make bench` and `make test` work on a fresh machine; `make setup`
# installs what is missing (redis-server, faketime).
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/lockbench/lockbench/internal/cli.Version=$(VERSION)
# A hang guard per test binary: scenarios runs its tests on Redis and, in a
# second process alongside, its core on Valkey; cmd/bench, the longest,
# takes some 17 minutes on a busy two-core runner.
TEST_TIMEOUT ?= 30m
# Test binaries run at once: the tests mostly wait on servers, timers and
# faults, so four overlap well on two cores.
TEST_P ?= 4

.PHONY: help setup redisson-driver build image-bin image image-chaos test test-short test-k8s bench perf perf-harness gobench sweep sweep-shards chaos chaos-full lint fmt clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: ## install redis-server and faketime if missing (apt-get as root; else print the command)
	@scripts/setup.sh

redisson-driver: ## build the Redisson peer driver (Java 17 + Maven); without them the Redisson tests skip
	@if command -v mvn >/dev/null && command -v java >/dev/null; then \
	  cd redisson-driver && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package; }; \
	else echo "redisson-driver: Java 17 and Maven are missing, so the Redisson interop tests will skip; install them with: apt-get install -y openjdk-17-jdk-headless maven"; fi

build: ## build bin/bench and bin/chaos
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

# The container engine for make image: podman, else docker.
ENGINE ?= $(shell command -v podman || command -v docker)
IMAGE ?= lockbench:latest
CHAOS_IMAGE ?= lockbench-chaos:latest

image-bin: ## build static bench and chaos (CGO_ENABLED=0) and the CA certificates into bin/image/, what the images hold
	GO='$(GO)' LDFLAGS='$(LDFLAGS)' scripts/image-context.sh bin/image

image: image-bin ## the container image $(IMAGE): FROM scratch, static bench and chaos; builds with no base image to pull
	$(ENGINE) build -t $(IMAGE) -f Dockerfile .

image-chaos: image-bin ## the chaos CronJob's image $(CHAOS_IMAGE): chaos on redis:7.4, which must be pullable
	$(ENGINE) build -t $(CHAOS_IMAGE) -f deploy/chaos.Dockerfile .

test: setup redisson-driver ## run every test with the race detector against real redis-server and real Redis containers
	@log=$$(mktemp); LOCKBENCH_ENGINE_LOG=$$log $(GO) test -race -count=1 -p $(TEST_P) -timeout $(TEST_TIMEOUT) ./...; status=$$?; \
	 sort $$log; rm -f $$log; exit $$status

test-short: setup redisson-driver ## the quick loop: every test but chaos scenarios, clusters and containers (go test -short, race on)
	$(GO) test -race -short -count=1 -timeout $(TEST_TIMEOUT) ./...

# The control plane's Go is built once into a cache outside the clone; the
# test binary is built with -race, as make test builds it, to share its cache.
test-k8s: ## deploy/k8s on a real control plane (kwok fakes the node; the first run builds it from the Go module proxy, 10-12 min, then cached): applied with no warning where the restricted Pod Security Standard is enforced, both Jobs complete, one worker pod per index with the environment bench reads
	LOCKBENCH_K8S_NAMESPACE=lockbench GO='$(GO)' scripts/kube-testenv.sh run \
	  $(GO) test -race -count=1 -timeout 10m -run '^TestK8sControlPlane$$' -v ./cmd/bench

bench: setup ## run the rw90 profile on a local redis-server (about 40 s)
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/bench run --profile rw90

perf: setup redisson-driver ## lockimpl (plain and auto-pipelined), raw scripts, redsync, redislock and real Redisson (default, tuned, in-JVM loop) side by side, with redis-benchmark and bare go-redis baselines, on Redis and (four workloads) beside it on Valkey, then the harness at 1,000, 10,000 and 100,000 owners; writes docs/perf.md (about 50 minutes)
	@command -v redis-benchmark >/dev/null || { echo "perf: redis-benchmark is missing; install it with: apt-get install -y redis-tools" >&2; exit 1; }
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/bench perf --only matrix,scale --servers redis,valkey --doc docs/perf.md --out bench-results/perf

perf-harness: setup ## the pipelining targets (lockimpl plain and auto-pipelined vs redis-benchmark and bare go-redis), scale at 1,000, 10,000 and 100,000 owners, handoff (several minutes)
	@command -v redis-benchmark >/dev/null || { echo "perf: redis-benchmark is missing; install it with: apt-get install -y redis-tools" >&2; exit 1; }
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/bench perf --only overhead,scale,handoff

gobench: setup ## Go benchmarks: lockimpl's hot paths with -benchmem (allocation regressions show here); holds' precision, timer against waiter
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./lockimpl
	$(GO) test -run '^$$' -bench HoldPrecision -count 1 ./workloads

sweep: setup ## capacity planning with a scalability model: rw90 over clients, mutex over owners, uncontended over shards; curves, model and reports in bench-results/sweep-* (about 8 min)
	rm -rf bench-results/sweep-rw90 bench-results/sweep-mutex bench-results/sweep-shards
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/bench sweep --profile rw90 --clients 1,2,4,8,16,32,64 --slo-p99 10ms --out bench-results/sweep-rw90
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/bench sweep --profile mutex --clients 1 --owners 1,2,4,8,16,32,64 --slo-p99 10ms --stop-after 0 --duration 10s --out bench-results/sweep-mutex
	$(MAKE) --no-print-directory sweep-shards

sweep-shards: setup ## lock throughput against Redis Cluster shard count (1 to 6 primaries, no replicas), uncontended; report in bench-results/sweep-shards (about 2 min)
	rm -rf bench-results/sweep-shards
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/bench sweep --profile uncontended --shards 1,2,3,4,5,6 --replicas 0 --duration 10s --out bench-results/sweep-shards

CHAOS_OUT ?= chaos-results
# SERVER is the locks' server for make chaos and chaos-full: redis (the
# default), valkey, or a binary's path.
SERVER ?=
CHAOS_SERVER = $(if $(SERVER),--server $(SERVER))

chaos: setup redisson-driver ## every chaos scenario and the mitigation matrix, scaled down (--quick; the matrix about 14 min); reports and JUnit in chaos-results/; SERVER=valkey for Valkey
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/chaos run --all --quick $(CHAOS_SERVER) --out $(CHAOS_OUT) --junit $(CHAOS_OUT)/junit.xml
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/chaos matrix --quick $(CHAOS_SERVER) --out $(CHAOS_OUT)

chaos-full: setup redisson-driver ## every chaos scenario and the mitigation matrix at full timings (Redisson's 30 s watchdog; the matrix alone about 63 min), as the nightly job runs it
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/chaos run --all $(CHAOS_SERVER) --out $(CHAOS_OUT) --junit $(CHAOS_OUT)/junit.xml
	$(GO) run -ldflags '$(LDFLAGS)' ./cmd/chaos matrix $(CHAOS_SERVER) --out $(CHAOS_OUT)

lint: ## gofmt, go vet, staticcheck (the version go.mod pins) and the package dependency-direction check
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@scripts/depcheck.sh

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

clean: ## remove build output
	rm -rf bin bench-results chaos-results
