# researchbot — the two commands of the README, and their helpers.
.PHONY: test run build image bench vet lint redis-server

GO ?= go

# test: everything CI runs, on a fresh machine.
test: redis-server vet lint
	$(GO) test -race -count=1 -timeout 30m ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# lint: staticcheck and golangci-lint (.golangci.yml) at pinned versions,
# built from the Go module proxy on first use and cached after.
STATICCHECK_VERSION ?= v0.8.2
GOLANGCI_LINT_VERSION ?= v2.15.0
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run ./...

# The tests start private redis-server processes; install it when missing.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing redis-server (Debian package)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	  else \
	    echo "the tests need redis-server: install it (e.g. sudo apt-get install redis-server)"; exit 1; \
	  fi; }

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

# bench: the performance figures of the README. The extraction quality
# benchmark reads its corpus from the module cache (go mod download).
bench: redis-server
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 3 ./internal/app
	$(GO) test -run '^$$' -bench ExtractionQuality -benchtime 1x ./fetch
	$(GO) test -run '^$$' -bench 'Startup|TerminalRun' -benchtime 1x -count 3 ./cmd/researchbot
