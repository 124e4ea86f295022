# researchbot — the two commands of the README, and their helpers.
.PHONY: test run build image bench vet lint lint-tools redis-server cgo faults soak fuzz

GO ?= go

# test: everything CI runs, on a fresh machine.
test: redis-server cgo vet lint
	$(GO) test -race -count=1 -timeout 30m ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet -tags '$(TEST_TAGS)' ./...

# vet and lint also see the fault suite and the soak (their build tags).
TEST_TAGS = faults,soak

# lint: staticcheck, golangci-lint (.golangci.yml) and deadcode (.ci/deadcode:
# no function the program never reaches, but those .ci/deadcode-allow names)
# at pinned versions, built from the Go module proxy on first use and cached
# after.
STATICCHECK_VERSION ?= v0.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
DEADCODE_VERSION ?= v0.52.0
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) -tags '$(TEST_TAGS)' ./...
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run --build-tags '$(TEST_TAGS)' ./...
	DEADCODE_VERSION=$(DEADCODE_VERSION) .ci/deadcode

# lint-tools: fetch and build the pinned linters without running them, so
# that their modules are in the module cache (.ci/fresh-debian-check mounts
# that cache read-only into its chroot).
lint-tools:
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	GOBIN=$$bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) && \
	GOBIN=$$bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) && \
	GOBIN=$$bin $(GO) install golang.org/x/tools/cmd/deadcode@$(DEADCODE_VERSION)

# The tests start private redis-server processes; install it when missing.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing redis-server (Debian package)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	  else \
	    echo "the tests need redis-server: install it (e.g. sudo apt-get install redis-server)"; exit 1; \
	  fi; }

# go test -race needs cgo, hence a C compiler; say so before the first
# compile fails with "-race requires cgo".
cgo:
	@[ "$$($(GO) env CGO_ENABLED)" = 1 ] || { \
	  echo "go test -race needs cgo and a C compiler: install gcc (Debian: apt-get install gcc libc6-dev, or sudo .ci/run --install-only)"; exit 1; }

# run: one research in the terminal, e.g. make run Q="How do heat pumps do in the cold?"
run:
	$(GO) run ./cmd/researchbot run "$(Q)"

# The version and commit 'researchbot --version' prints.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o bin/researchbot ./cmd/researchbot

# image: the container image (needs Docker with BuildKit).
image:
	docker build --build-arg VERSION="$(VERSION)" --build-arg COMMIT="$(COMMIT)" -t researchbot:$(or $(VERSION),dev) .

# bench: the figures of docs/performance.md. The extraction quality
# benchmark reads its corpus from the module cache (go mod download).
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 3 ./internal/app
	$(GO) test -run '^$$' -bench ExtractionQuality -benchtime 1x ./fetch
	$(GO) test -run '^$$' -bench 'Startup|TerminalRun' -benchtime 1x -count 1 ./cmd/researchbot

# fuzz: every fuzz target, FUZZTIME each (make fuzz FUZZTIME=5m), with a
# new failure minimised for at most 5 s so the time goes to exploring (Go's
# default minimises for 60 s; FuzzExtract then ran 9 inputs a minute). Go
# fuzzes one target per command.
FUZZTIME ?= 30s
FUZZ = $(GO) test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s -parallel 2
fuzz:
	$(FUZZ) -fuzz '^FuzzExtract$$' ./fetch
	$(FUZZ) -fuzz '^FuzzNormalizeURL$$' ./fetch
	$(FUZZ) -fuzz '^FuzzHTML$$' ./extract
	$(FUZZ) -fuzz '^FuzzPDF$$' ./extract
	$(FUZZ) -fuzz '^FuzzDOCX$$' ./extract
	$(FUZZ) -fuzz '^FuzzNormalizeURL$$' ./dedup
	$(FUZZ) -fuzz '^FuzzIdentifiers$$' ./dedup
	$(FUZZ) -fuzz '^FuzzSimhash$$' ./dedup
	$(FUZZ) -fuzz '^FuzzMerge$$' ./search
	$(FUZZ) -fuzz '^FuzzWords$$' ./textmatch
	$(FUZZ) -fuzz '^FuzzMrkdwn$$' ./bot/blockkit
	$(FUZZ) -fuzz '^FuzzMarkdownBlockText$$' ./bot/blockkit

# faults: the fault suite — internal/faults (build tag faults) and the tests
# elsewhere that cover rows of docs/failure-behaviour.md's table. Each
# prints its figure ("FIGURE ..." or its own t.Logf line). CI runs it after
# make test; it takes a few minutes.
FAULT_ROWS_CMD = TestKilledAtACheckpointResumes|TestKilledInTheMiddleOfAStepResumes|TestAnotherWorkerTakesOverADeadWorkersRun|TestServeKilledWhileACheckpointWaitsAndTheOldButtonFinishesTheRun|TestATerminalRunDecidedElsewhereGoesOnAtOnce
FAULT_ROWS_APP = TestAModelThatIsDownEndsTheRunWithinItsBound|TestCheckpointTimeoutsFireOnTimeThroughTheQueue|TestRateLimitWithRetryAfterThenSuccess|TestMalformedJSONIsRepaired|TestContextLengthErrorShrinksTheInput|TestARefusalEndsTheRunAtOnceWithWhatItHas
FAULT_ROWS_BOT = TestE2EDoubleClickAndRedeliveryApplyOnce|TestRetriedEventReachesHandlerOnce|TestRequestsFromAnotherWorkspaceOrAppAreRefusedPolitely|TestE2EClickOnSupersededCheckpoint|TestTamperedButtonValueIsRefusedAndLoggedBounded|TestHostileQuestions|TestE2EADecisionWhoseFateIsUnknownIsNotCalledUnchanged|TestRepeatedSlashCommandOnAnotherReplicaStartsNoSecondRun
FAULT_ROWS_STORE = TestASaveWhoseReplyIsLostIsUnknownAndARetryIsNotDoubled|TestAStoredVersionThatWentBackwardsIsReportedLoudly|TestAHolderThatCannotRefreshStopsBeforeItsLeaseCouldBeTaken
faults: redis-server cgo
	$(GO) test -race -count=1 -timeout 20m -tags faults -v ./internal/faults
	$(GO) test -race -count=1 -timeout 10m -v -run '^($(FAULT_ROWS_CMD))$$' ./cmd/researchbot
	$(GO) test -race -count=1 -timeout 10m -v -run '^($(FAULT_ROWS_APP))$$' ./internal/app
	$(GO) test -race -count=1 -timeout 10m -v -run '^($(FAULT_ROWS_BOT))$$' ./bot
	$(GO) test -race -count=1 -timeout 10m -v -run '^($(FAULT_ROWS_STORE))$$' ./redisstore
	$(GO) test -race -count=1 -timeout 10m -v -run '^(TestExactlyOnceAcrossReplicas)$$' ./scheduler
	$(GO) test -race -count=1 -timeout 10m -v -run '^(TestTerminalOutputIsClean|TestCleanHandlesLargeInput)$$' ./terminal

# soak: 200 runs across 3 workers with random faults (not in CI; <= 15 min).
soak: redis-server
	$(GO) test -count=1 -timeout 20m -tags 'faults soak' -v -run '^TestSoak$$' ./internal/faults
