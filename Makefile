# Sluice: make test runs everything CI runs; make bench measures.
GO ?= go
FUZZTIME ?= 10s
BPF_SRC := $(wildcard bpf/*.c bpf/*.h bpf/lib/*.h bpf/lab/*.c bpf/lab/*.h)

.PHONY: all build generate check-generated lint test deps bench fuzz lab verify

all: build

build:
	$(GO) build ./...

# bpf2go with the pinned clang-19; the objects and bindings are committed.
generate:
	$(GO) generate ./...

check-generated: generate
	@git diff --exit-code --stat -- '*_bpfel.go' '*_bpfel.o' '*_bpfel_test.go' '*_bpfel_test.o' || \
		(echo "generated eBPF objects differ from the committed ones: run make generate and commit" >&2; exit 1)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '_bpfel.go$$')); \
		if [ -n "$$out" ]; then echo "gofmt would change: $$out" >&2; exit 1; fi
	$(GO) vet ./...
	clang-format-19 --dry-run -Werror $(BPF_SRC)
	./scripts/lint-deploy.sh

deps:
	./scripts/deps.sh

# The lab's default scenario against upfd (lab/scenario/default.yaml):
# prints the results for a terminal; files (run.md, plots) go to upflab-results/.
lab: deps
	$(GO) build -o bin/ ./cmd/upfd ./cmd/upflab
	./bin/upflab run $(SCENARIO)

# upflab verify's full suite against upfd (lab/scenario/verify.yaml): the
# scorecard, also in upflab-results/; fails if a check does. CI runs the
# short suite (lab/runner's TestPrivilegedVerifyShort). VERIFY_FLAGS may
# give another UPF: make verify VERIFY_FLAGS='--upf lab/scenario/command.yaml'.
verify: deps
	$(GO) build -o bin/ ./cmd/upfd ./cmd/upflab
	./bin/upflab verify $(VERIFY_FLAGS)

# The whole suite, privileged tests included (they need root), then a short fuzz.
test: deps check-generated lint
	$(GO) test -count=1 ./...
	$(MAKE) fuzz

# Minimizing a new input runs the target for up to a minute by default, in
# which no new input is tried (FuzzN4 showed 0 executions a second for 6-8
# of its 10 s): 50 runs a new input is enough to keep the seconds for fuzzing.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDatapath$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/datapath
	$(GO) test -run '^$$' -fuzz '^FuzzN4$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/pfcp
	$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/saved

# The datapath and N4 alone, the metrics scrape, the lab's generator, real
# UEs' TCP through upfd beside its ceiling, then
# upfd beside the reference forwarder in the lab with 1 and 100,000 sessions
# and under the subscriber model.
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./internal/datapath
	$(GO) test -run '^$$' -bench '^BenchmarkN4$$' -benchtime 1x -timeout 30m ./internal/pfcp
	$(GO) test -run '^$$' -bench '^BenchmarkScrape$$' -benchtime 1x -timeout 30m ./internal/metrics
	$(GO) test -run '^$$' -bench '^BenchmarkGenerator$$' -benchtime 1x -timeout 30m ./lab/tgen
	$(GO) test -run '^$$' -bench '^BenchmarkRealUEs$$' -benchtime 1x -timeout 30m ./lab/gnb
	$(GO) build -o bin/ ./cmd/upfd ./cmd/upflab
	./bin/upflab run lab/scenario/bench-1.yaml
	./bin/upflab run lab/scenario/bench-100000.yaml
	./bin/upflab run lab/scenario/bench-subscribers.yaml
