package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/researchbot/researchbot/"

// inward says, for every package of the module (module-relative), which of
// the module's packages it may depend on, directly or not, and why. "*"
// allows any. Dependencies point inward: the domain at the centre knows no
// adapter, adapters know the domain and not each other, only the wiring
// knows everything.
var inward = map[string]struct {
	may []string
	why string
}{
	"checkpoints":           {nil, "checkpoint definitions and their lifecycle are the innermost domain"},
	"textmatch":             {nil, "text matching is a leaf used by the domain"},
	"dedup":                 {nil, "URL normalisation and deduplication is a leaf shared by search and scheduler"},
	"config":                {nil, "settings are read from the environment with the standard library only"},
	"pipeline":              {[]string{"checkpoints", "textmatch"}, "the research run declares the ports it needs (Model, Searcher, Store, Presenter…) instead of importing adapters"},
	"scheduler":             {[]string{"pipeline", "checkpoints", "textmatch", "dedup"}, "research streams are domain: they start pipeline runs through ports"},
	"llm":                   {[]string{"internal/retryafter"}, "the LLM client is an adapter; its rate budget is a port it declares"},
	"llm/llmtest":           {nil, "the fake OpenAI server speaks only the wire protocol"},
	"search":                {[]string{"dedup", "internal/retryafter"}, "search backends are an adapter; their rate budget is a port they declare"},
	"search/mcpsearch":      {[]string{"search", "dedup", "internal/retryafter"}, "an MCP server as a search backend: an adapter of search, knowing nothing else"},
	"search/docsearch":      {[]string{"search", "extract", "dedup", "internal/retryafter"}, "a folder of documents as a search backend: an adapter of search that reads files with extract and keeps their index (bleve) to itself"},
	"fetch":                 {[]string{"extract"}, "page fetching is an adapter; its cache is a port it declares; a fetched PDF or HTML page is read by extract"},
	"extract":               {nil, "document text extraction (PDF, DOCX, HTML, plain text, Markdown, CSV) is a leaf: bytes in, text with page offsets (and an HTML page's metadata) out, for fetch, shared files, --file and the document collection"},
	"terminal":              {[]string{"pipeline", "checkpoints", "textmatch"}, "the terminal presenter adapts the domain to a TTY"},
	"bot":                   {[]string{"bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the Slack adapter knows the domain; its memory and rate budgets are ports, not redisstore; its counters join the process's metrics; files people share in Slack are read by extract"},
	"bot/blockkit":          {[]string{"pipeline", "checkpoints", "scheduler", "textmatch", "dedup"}, "Block Kit and mrkdwn rendering (messages, App Home, forms) are pure functions of the domain's types: a leaf under bot that knows neither the transport nor the process"},
	"bot/streams":           {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the research streams feature (\"/research stream …\", the creation conversation, edits, the stream buttons): it imports the transport (bot), whose routes, requests and Sender it uses, the rendering leaf and the domain's scheduler, and reaches the rest (metrics, shared files) only through bot; its stores and model are ports it declares"},
	"bot/workspacesearch":   {[]string{"pipeline", "checkpoints", "textmatch"}, "the Slack workspace (Real-time Search, assistant.search.context) as a pipeline.Searcher: an adapter under bot, the only room of slack-go, knowing only the domain's types"},
	"internal/obs":          {[]string{"pipeline", "checkpoints", "textmatch"}, "metrics and health endpoints, shared by serve and worker: the engine's observer, fed by adapters through the wiring, knowing none of them"},
	"redisstore":            {[]string{"pipeline", "checkpoints", "scheduler", "textmatch", "dedup"}, "the Redis adapter implements the domain's stores and the adapters' ports"},
	"internal/app":          {[]string{"config", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "llm", "search", "search/mcpsearch", "search/docsearch", "fetch", "extract", "redisstore", "internal/retryafter", "internal/tracing"}, "app assembles the engine from adapters; it knows no user interface (bot, terminal)"},
	"internal/tracing":      {[]string{"pipeline", "checkpoints", "textmatch"}, "the OpenTelemetry adapter implements the engine's Tracer port and gives the wiring the spans of the adapters' calls; it knows the domain's types and no other adapter"},
	"internal/redistest":    {nil, "test helper: a private redis-server"},
	"internal/goldentest":   {nil, "test helper: compares rendered output with golden files (-update rewrites them)"},
	"internal/clockwait":    {nil, "a leaf over quartz: see everywhere"},
	"internal/retryafter":   {nil, "the one reading of an HTTP Retry-After header, shared by the adapters that are asked to wait (llm, search)"},
	"internal/slackfake":    {nil, "test helper: a fake Slack speaking its wire protocol"},
	"internal/mcpfake":      {nil, "test helper: an MCP server built with the SDK, speaking only the protocol"},
	"internal/researchtest": {[]string{"pipeline", "checkpoints", "textmatch", "llm/llmtest"}, "test helper: a scripted research model for the domain"},
	"internal/archtest":     {nil, "this test"},
	"internal/faults":       {nil, "the fault suite: its code is tests only (build tag faults)"},
	"eval":                  {[]string{"pipeline", "checkpoints", "textmatch"}, "the built-in evaluation: its collection and questions (embedded files) and the grading of a run's report, a pure function of the domain's types"},
	"internal/app/roles":    {[]string{"internal/app", "bot", "bot/blockkit", "bot/streams", "bot/workspacesearch", "internal/obs", "internal/tracing", "config", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "llm", "search", "search/mcpsearch", "search/docsearch", "fetch", "extract", "redisstore", "internal/retryafter"}, "the assembly of a process: internal/app's engine plus the roles a command asks for (Slack, workers, scheduler, HTTP, a foreground job), each part run and stopped by one owner; it knows every adapter and plugs bot's features into it, but knows no terminal and no command"},
	"cmd/researchbot":       {[]string{"*"}, "main is the only place that wires everything"},
}

// everywhere lists the module's leaf packages any package may depend on,
// each with its reason.
var everywhere = map[string]string{
	"internal/clockwait": "the one wait on the injected clock that ends with its context (quartz has none): a leaf of one function over quartz, for every package that retries, backs off or paces",
}

// assemblers are the packages that wire every room together, so may
// depend on any technology through its room's package, with their reasons.
var assemblers = map[string]string{
	"internal/app/roles": "the process's assembly builds every adapter (Redis, Slack, the model, search, tracing) and runs them: it is where the rooms meet, as cmd/researchbot and internal/app are",
}

// rooms gives each technology its room: only the packages listed may
// depend on the library (module path prefix), directly or not.
var rooms = []struct {
	lib  string
	only []string
	why  string
}{
	{"github.com/redis/go-redis/", []string{"redisstore", "internal/app", "cmd/researchbot", "internal/redistest"}, "Redis has one room: redisstore; consumers declare ports (rate budget, page cache, Slack memory)"},
	{"github.com/go-redis/redis_rate/", []string{"redisstore", "internal/app", "cmd/researchbot"}, "one rate limiter, one key scheme (rb:rate:<area>:<key>), in redisstore"},
	{"github.com/alicebob/miniredis/", []string{"redisstore", "internal/app", "cmd/researchbot"}, "the embedded Redis is how redisstore connects without REDIS_URL"},
	{"github.com/slack-go/slack", []string{"bot", "bot/blockkit", "bot/streams", "bot/workspacesearch", "internal/slackfake", "cmd/researchbot"}, "Slack has one room: bot/... (bot's rendering leaf uses the Block Kit types; workspace search is a Searcher under bot; the fake stands in for Slack in tests)"},
	{"go.opentelemetry.io/otel", []string{"internal/tracing", "internal/app", "cmd/researchbot"}, "OpenTelemetry has one room: internal/tracing (API, SDK and OTLP exporter); the engine sees the pipeline.Tracer port and llm, search, fetch and bot stay free of it: their spans are made around their calls by the wiring (adapters' hooks, an http.RoundTripper), so no package but the adapter changes when the tracing library does"},
	{"github.com/modelcontextprotocol/go-sdk", []string{"search/mcpsearch", "internal/mcpfake", "internal/app", "cmd/researchbot"}, "MCP has one room: mcpsearch calls only the configured tools of a server; the engine sees search backends and documents (and the fake server stands in for MCP servers in tests)"},
	{"github.com/fumiama/go-docx", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "bot/streams", "cmd/researchbot"}, "Word documents are read in extract only, behind its zip-bomb check"},
	{"github.com/markusmobius/go-trafilatura", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "bot/streams", "cmd/researchbot"}, "HTML main-text extraction has one room: extract, behind its pruning budgets, text cap and panic guard; fetched pages, shared files, --file and the document collection all read HTML through it"},
	{"github.com/JohannesKaufmann/html-to-markdown/", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "bot/streams", "cmd/researchbot"}, "HTML is rendered as Markdown in extract only, the same way for a fetched page and a shared file"},
	{"github.com/ledongthuc/pdf", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "bot/streams", "cmd/researchbot"}, "PDF parsing has one room: extract, behind its bounds (bytes, pages, decompressed bytes, deadline) and its panic guard"},
	{"github.com/blevesearch/", []string{"search/docsearch", "internal/app", "cmd/researchbot"}, "full-text indexing has one room: docsearch keeps the document collection's index (bleve, BM25) and its on-disk layout; the engine sees a search backend and documents read by address"},
	{"github.com/sashabaranov/go-openai", []string{"llm", "internal/app", "cmd/researchbot"}, "the OpenAI SDK stays in llm; the domain sees pipeline.Model"},
}

// leaves lists packages that must stay pure functions although their
// neighbours do I/O, with what they may never depend on (a module package by
// its relative path, a third-party one by path prefix) and why.
var leaves = map[string]struct {
	never []string
	why   string
}{
	"bot/blockkit": {
		[]string{"bot", "internal/obs", "github.com/slack-go/slack/socketmode", "github.com/redis/", "github.com/go-redis/", "github.com/alicebob/miniredis/", "github.com/prometheus/"},
		"the rendering leaf turns the domain's types into Block Kit and mrkdwn and does nothing else: no Slack connection (socketmode) or Web API call, no Redis, no metrics, no way back into bot, so every renderer is tested by its golden file alone",
	},
}

// pure lists the domain packages and the only third-party modules (path
// prefixes) each may depend on: the domain is the standard library and
// its own types, and the one clock (quartz, itself the standard library
// only) that the assembly hands it.
var pure = map[string][]string{
	"checkpoints": nil,
	"config":      nil,
	"dedup":       {"golang.org/x/net/publicsuffix"},
	"textmatch":   {"golang.org/x/text/"},
	"pipeline":    {"golang.org/x/text/", "github.com/coder/quartz"},
	"scheduler":   {"golang.org/x/text/", "golang.org/x/net/publicsuffix", "github.com/robfig/cron/", "github.com/coder/quartz"},
}

// thirdParty reports whether d (module-relative for the module's own
// packages) is a third-party package.
func thirdParty(d string) bool { return strings.Contains(strings.Split(d, "/")[0], ".") }

// deps returns every package of the module with its transitive
// non-standard dependencies (module-relative for the module's own), as
// `go list -deps` lists them.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		var ds []string
		for _, d := range fields[1:] {
			if strings.HasPrefix(d, module) || thirdParty(d) {
				ds = append(ds, strings.TrimPrefix(d, module))
			}
		}
		all[strings.TrimPrefix(fields[0], module)] = ds
	}
	return all
}

func TestEveryPackageHasARule(t *testing.T) {
	all := deps(t)
	for pkg := range all {
		if _, ok := inward[pkg]; !ok {
			t.Errorf("package %s has no row in archtest's inward table (nor, probably, in ARCHITECTURE.md's package table): say what it may depend on and why", pkg)
		}
	}
	for pkg := range inward {
		if _, ok := all[pkg]; !ok {
			t.Errorf("archtest has a rule for %s, which does not exist", pkg)
		}
	}
}

func TestDependenciesPointInward(t *testing.T) {
	for pkg, ds := range deps(t) {
		rule := inward[pkg]
		if slices.Contains(rule.may, "*") {
			continue
		}
		for _, d := range ds {
			if _, ok := everywhere[d]; ok {
				continue
			}
			if !thirdParty(d) && !slices.Contains(rule.may, d) {
				t.Errorf("%s depends on %s: %s", pkg, d, rule.why)
			}
		}
	}
}

func TestOneRoomPerTechnology(t *testing.T) {
	for pkg, ds := range deps(t) {
		for _, r := range rooms {
			if _, ok := assemblers[pkg]; ok || slices.Contains(r.only, pkg) {
				continue
			}
			if i := slices.IndexFunc(ds, func(d string) bool { return strings.HasPrefix(d, r.lib) }); i >= 0 {
				t.Errorf("%s depends on %s (only %v may): %s", pkg, ds[i], r.only, r.why)
			}
		}
	}
}

func TestLeavesStayPure(t *testing.T) {
	all := deps(t)
	for pkg, rule := range leaves {
		if _, ok := all[pkg]; !ok {
			t.Errorf("archtest has a leaf rule for %s, which does not exist", pkg)
		}
		for _, d := range all[pkg] {
			if slices.ContainsFunc(rule.never, func(n string) bool { return d == n || thirdParty(n) && strings.HasPrefix(d, n) }) {
				t.Errorf("%s depends on %s: %s", pkg, d, rule.why)
			}
		}
	}
}

func TestDomainIsPure(t *testing.T) {
	all := deps(t)
	for pkg, allowed := range pure {
		for _, d := range all[pkg] {
			if thirdParty(d) && !slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(d, a) }) {
				t.Errorf("%s depends on %s: the domain uses the standard library, its own types and %v only", pkg, d, allowed)
			}
		}
	}
}
