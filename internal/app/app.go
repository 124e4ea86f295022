// Package app assembles researchbot from its configuration: it connects to
// Redis (or starts the embedded one), builds the LLM client, the search
// backends, the fetcher, the store, queue and locks, and the research engine.
// The command (cmd/researchbot) and the end-to-end tests both build the
// program through it, so what is tested is what runs.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/fetch"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
	"github.com/researchbot/researchbot/search"
	"github.com/researchbot/researchbot/search/mcpsearch"
)

// Options are what the caller adds to the configuration.
type Options struct {
	// Presenters by Origin.Kind ("terminal", "slack", "stream").
	Presenters map[string]pipeline.Presenter
	// DefaultQueue is the queue of runs whose origin names none.
	DefaultQueue string
	// Observer receives metrics events; nil means none.
	Observer pipeline.Observer
	// Calls is told about every call to the model, the search backends
	// and the web, for metrics; nil means none.
	Calls  CallObserver
	Logger *slog.Logger
	// HTTPClient is used for the LLM and search APIs (not for page fetching).
	HTTPClient *http.Client
	// ShutdownTimeout is how long stopping a worker waits for steps in flight
	// before handing them back to the queue (default 20 s).
	ShutdownTimeout time.Duration
	// NewPrivateQueue says StartWorker serves a new queue that only this
	// process uses (a terminal run's): the worker's first claim pass does
	// not look in it (see redisstore.WorkerOptions.NewQueues).
	NewPrivateQueue bool
	// Tracing records runs as traces (see internal/tracing); nil means
	// none. The caller owns it (and shuts it down after Close).
	Tracing *tracing.Tracing
	// RetryDelay overrides the queue's retry backoff (tests).
	RetryDelay func(n int, err error) time.Duration
	// Clock is the process's one clock, handed to every package that reads
	// the time or waits (the engine, the adapters, the scheduler's digests,
	// the queue's claim passes and timers, the document collection's periodic check); nil means the
	// real clock. Tests pass a quartz mock or a settable clock.
	Clock quartz.Clock
	// Searchers are asked beside the configured search backends, on every
	// search (the Slack workspace, which only the bot can assemble).
	Searchers []pipeline.Searcher
	// OnlyDocuments makes the document collection (DOCS_DIR) the only
	// search backend: no web search and no MCP server, whatever the
	// configuration says (researchbot eval: every run on the same evidence).
	OnlyDocuments bool
}

// App is an assembled researchbot.
type App struct {
	Config config.Config
	Conn   *redisstore.Conn
	// DB hands out every store on Conn under redisstore.DefaultPrefix.
	DB       *redisstore.DB
	Store    *redisstore.Store
	Queue    *redisstore.Queue
	Locker   *redisstore.Locker
	Engine   *pipeline.Engine
	Backends []string // active search backends
	opts     Options
	// presenters is the engine's presenter map; AddPresenter fills it.
	presenters map[string]pipeline.Presenter
	log        *slog.Logger
	// llm is the LLM client the engine uses; StreamModel shares it.
	llm *llm.Client
	// worker is the worker StartWorker started (for OldestUnleased).
	worker atomic.Pointer[redisstore.Worker]
	// listen is set once a Watch of this process subscribed to a run: the
	// worker of a new private queue subscribes to its wake channel from
	// then on (listenForHints).
	listen atomic.Bool
	// mcp are the MCP servers' backends (their sessions end with Close).
	mcp []*mcpsearch.Backend
	// lost carries runs found rolled back to watchLostWrites.
	lost chan lostRun
	// lostWatched is set while watchLostWrites runs (a worker is started).
	lostWatched atomic.Bool
	// docs holds the document collection (DOCS_DIR) once StartWorker
	// opened it; nil without DOCS_DIR.
	docs *docsSlot
}

// New assembles researchbot. The caller must Close it.
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	conn, err := redisstore.Connect(ctx, cfg.RedisURL, redisstore.ConnOptions{Lease: cfg.LeaseTTL})
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, Conn: conn, DB: redisstore.Open(conn, redisstore.DefaultPrefix), opts: opts, log: opts.Logger}
	if err := a.build(); err != nil {
		a.closeMCP()
		a.closeDocs()
		_ = conn.Close()
		return nil, err
	}
	// The built-in checkpoint definitions are there from the first start,
	// for the App Home and the CLI as for runs; an admin's edits are kept.
	if err := a.Engine.SeedDefinitions(ctx); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// Clock is the process's one clock (Options.Clock): the commands hand it to
// what they build beside the App (the Slack side, the stream scheduler,
// the terminal).
func (a *App) Clock() quartz.Clock { return a.opts.Clock }

func (a *App) build() error {
	cfg := a.Config
	prices := llm.DefaultPrices()
	for m, p := range cfg.Prices {
		prices[m] = llm.Price{InputPerMTok: p.In, OutputPerMTok: p.Out}
	}
	var limiter llm.Limiter
	if cfg.LLMPerMinute > 0 {
		limiter = llm.NewSharedLimiter(a.DB.RateLimiter("llm"), "openai", cfg.LLMPerMinute, a.opts.Clock)
	}
	// LLM_MAX_RETRIES counts retries, 0 meaning none; llm.Config's zero
	// means its default and a negative number none.
	retries := cfg.LLMMaxRetries
	if retries == 0 {
		retries = -1
	}
	client, err := llm.New(llm.Config{
		BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Timeout: cfg.LLMTimeout,
		MaxRetries: retries, Prices: prices, Limiter: limiter,
		HTTPClient: a.opts.Tracing.HTTPClient(a.opts.HTTPClient, 0), Logger: a.log,
	})
	if err != nil {
		return fmt.Errorf("LLM client: %w", err)
	}
	a.llm = client
	var backends []search.Backend
	if !a.opts.OnlyDocuments {
		web, mcps := searchBackends(cfg, a.opts.Tracing.HTTPClient(a.opts.HTTPClient, search.DefaultTimeout), a.opts.Clock)
		backends, a.mcp = web, mcps
		for _, b := range mcps {
			backends = append(backends, b)
		}
	}
	if len(cfg.DocsDirs) > 0 {
		a.docs = &docsSlot{}
		backends = append(backends, docsBackend{a.docs})
	}
	for _, b := range backends {
		a.Backends = append(a.Backends, b.Name())
	}
	// Public APIs' published rate rules, shared across replicas.
	perMinute := map[string]int{"arxiv": 20, "wikipedia": 200, "openalex": 600, "crossref": 300, "brave": 60, "tavily": 60, "searxng": 600}
	multi := search.NewMulti(backends, search.Options{
		Limiter: search.NewSharedLimiter(a.DB.RateLimiter("search"), perMinute), MaxWait: 5 * time.Second, Clock: a.opts.Clock,
	})
	pageFetcher := fetch.New(fetch.Config{
		AllowPrivate: cfg.AllowPrivate, Timeout: cfg.FetchTimeout, MaxBytes: cfg.FetchMaxBytes,
		CacheTTL: cfg.FetchCacheTTL, Clock: a.opts.Clock,
	}, a.DB.PageCache())

	a.lost = make(chan lostRun, lostWritesQueue)
	a.Store = a.DB.Store(redisstore.StoreOptions{
		Retention: cfg.Retention, PageRetention: cfg.PageRetention, Logger: a.log,
		OnLostWrites: a.noteLostWrites, Clock: a.opts.Clock,
		IndexRefresh: indexRefresh(cfg.LeaseTTL), OnWatchSubscribe: a.listenForHints,
	})
	a.Queue = a.DB.Queue(redisstore.QueueOptions{Clock: a.opts.Clock})
	a.Locker = a.DB.Locker(cfg.LeaseTTL)
	presenters := map[string]pipeline.Presenter{}
	maps.Copy(presenters, a.opts.Presenters)
	a.presenters = presenters
	llmModel := &model{client: client, modelOf: cfg.ModelFor, prices: prices, endpoint: endpointName(cfg.OpenAIBaseURL), calls: a.callObserver(), spans: a.opts.Tracing, clock: a.opts.Clock}
	eng, err := pipeline.New(pipeline.Config{
		Store:      a.Store,
		Queue:      a.Queue,
		Locker:     a.Locker,
		Model:      llmModel,
		Prices:     llmModel,
		Searcher:   joinSearchers(&searcher{multi: multi, clock: a.opts.Clock, backends: a.Backends, calls: a.callObserver(), spans: a.opts.Tracing}, a.opts.Searchers),
		Fetcher:    newSourceFetcher(&fetcher{f: pageFetcher, clock: a.opts.Clock, calls: a.callObserver(), spans: a.opts.Tracing}, a.mcp, a.docs, a.opts.Clock, a.callObserver()),
		Presenters: presenters,
		AutoDeciders: map[string]pipeline.AutoDecider{
			scheduler.OriginKind: scheduler.DigestCheckpoints{Clock: a.opts.Clock},
		},
		Defaults: pipeline.Limits{
			MaxIterations: cfg.MaxIterations, MaxGapRounds: cfg.MaxGapRounds, MaxCostUSD: cfg.MaxCostUSD,
			MaxWall: cfg.MaxWall, MaxSources: cfg.MaxSources, MaxSourceTokens: cfg.MaxSourceTokens,
			MaxSearchErrors: cfg.MaxSearchErrors,
		},
		Writing:      pipeline.Writing{StyleGuide: cfg.StyleGuide, TargetWords: cfg.TargetLength},
		ModelWait:    cfg.LLMStepWait,
		DefaultQueue: a.opts.DefaultQueue,
		Observer:     a.opts.Observer,
		Tracer:       a.opts.Tracing.Runs(),
		Clock:        a.opts.Clock,
		Logger:       a.log,
	})
	if err != nil {
		return err
	}
	a.Engine = eng
	return nil
}

// indexRefresh is how old a run's index scores may grow before a save
// rewrites them (redisstore.StoreOptions.IndexRefresh): a sixth of the
// lease, a third of the claim passes' half-lease window, so a score is always
// well within it (2.5 s with the default 15 s lease; each refresh is two
// commands, so a run of a few seconds pays none or one, not one a second).
func indexRefresh(lease time.Duration) time.Duration { return lease / 6 }

// AddPresenter registers the presenter of runs whose Origin.Kind is kind.
// Call it before StartWorker: presenters that need the App's Redis (the Slack
// one) can only be made after New.
func (a *App) AddPresenter(kind string, p pipeline.Presenter) { a.presenters[kind] = p }

// TerminalQueuePrefix starts the name of a terminal run's private queue:
// only the process that started the run serves it.
const TerminalQueuePrefix = "terminal-"

// StartWorker starts advancing runs from the given queues in the background:
// those woken in this process at once, those woken elsewhere as their
// hints arrive, and every run of those queues with work and no worker
// (a dead worker's, once its lease expired) or whose checkpoint deadline
// came, found in the store's indexes; it also marks terminal runs whose
// process went away interrupted. The returned stop function hands steps in
// flight back and waits.
func (a *App) StartWorker(queues []string) (stop func(), err error) {
	w := a.DB.Worker(a.Engine, redisstore.WorkerOptions{
		Queues: queues, Concurrency: a.Config.WorkerConcurrency, Logger: a.log, RetryDelay: a.opts.RetryDelay,
		ShutdownTimeout: a.opts.ShutdownTimeout, Lease: a.Config.LeaseTTL, Clock: a.opts.Clock,
		NewQueues: a.opts.NewPrivateQueue, Interrupter: a.Engine,
		Abandoned: func(q string) bool { return strings.HasPrefix(q, TerminalQueuePrefix) },
	})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	a.Queue.RunLocally(w)
	a.worker.Store(w)
	if a.listen.Load() {
		w.Listen()
	}
	stopDocs, err := a.watchDocs()
	if err != nil {
		w.Stop()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	lostDone := make(chan struct{})
	go func() { // owner: this worker; stopped by stop()
		defer close(lostDone)
		a.watchLostWrites(ctx, a.Config.LeaseTTL/2)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			stopDocs()
			cancel()
			<-lostDone
			w.Stop()
		})
	}, nil
}

// listenForHints makes the worker subscribe to its queues' wake channels
// once a Watch of this process subscribed to a run (OnWatchSubscribe): a
// run followed here may then be changed, and woken, by another process.
// Only a worker of a new private queue waits for this
// (redisstore.WorkerOptions.NewQueues); a worker started later listens at
// its start.
func (a *App) listenForHints(string) {
	a.listen.Store(true)
	if w := a.worker.Load(); w != nil {
		w.Listen()
	}
}

// OldestUnleased is how long the oldest run with work in this process's
// queues has gone without a worker (for the /metrics gauge); 0 before
// StartWorker.
func (a *App) OldestUnleased(ctx context.Context) (time.Duration, error) {
	w := a.worker.Load()
	if w == nil {
		return 0, nil
	}
	return w.OldestUnleased(ctx)
}

// Close releases the Redis connections and ends the MCP
// servers' sessions.
func (a *App) Close() error {
	a.closeMCP()
	a.closeDocs()
	return a.Conn.Close()
}

// closeMCP ends the MCP servers' sessions (stopping stdio servers); how a
// server's process ended is its own affair, logged.
func (a *App) closeMCP() {
	for _, b := range a.mcp {
		if err := b.Close(); err != nil {
			a.log.Warn("MCP server ended with an error", "backend", b.Name(), "err", err)
		}
	}
}
