package archtest

import (
	"encoding/json"
	"errors"
	"io"
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
	"bot/bottest":           {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract", "redisstore", "internal/redistest", "internal/slackfake"}, "test helper: a real bot.App on the fake Slack and a real Redis (redisstore's SlackMemory and rate budget) for the tests of bot's features, driven as Slack would; no package may import it but tests (no rule here names it)"},
	"bot/decisions":         {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "what a person does with a checkpoint message (its buttons and forms): it imports the transport (bot), whose routes (the forms' fast path, Routes.FormAction), requests, Sender and rules about checkpoints (Request.CheckCheckpoint, Request.Decide) it uses, the rendering leaf, and the domain's checkpoint types; the engine and the Home are ports it declares"},
	"bot/clarify":           {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "answering a run's clarifying questions by mention: it imports the transport (bot), whose mention routing (bot.RunMessageHandler), requests, Sender, approver rule (Request.MayDecide) and recording of a decision (Request.Decide) it uses, and the rendering leaf; the engine is a port it declares"},
	"bot/feedback":          {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the verdicts feature (the native 👍 / 👎, the old buttons, the reason form): it imports the transport (bot), whose routes, requests, Sender and metrics it uses, and the rendering leaf; the engine is a port it declares"},
	"bot/assistant":         {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the assistant panel feature (greeting, prompts, the person's messages in the panel): it imports the transport (bot), whose routes, requests, Sender, panel calls (bot.AssistantPanel) and rules (Request.StartResearch, Request.PendingDecisions) it uses, and the rendering leaf; the memory and the streams are ports it is handed"},
	"bot/home":              {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the App Home feature (the tab, the checkpoint definitions' admin buttons and form): it imports the transport (bot), whose routes, requests, Sender and rules of who decides what (Request.WaitingOn, Request.ApprovesAnywhere) it uses, and the rendering leaf; the runs, whose Home was published, the definitions and the streams are ports it declares"},
	"bot/followups":         {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the follow-up questions feature (a question in a finished run's thread answered from its sources, \"Research this\"): it imports the transport (bot), whose mention routing (bot.RunMessageHandler), requests, Sender, rate-limit counter and start of a research (Request.StartResearch) it uses, and the rendering leaf; the engine and the rate budget are ports it declares"},
	"bot/neverdomain":       {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the source review's \"Never use a site…\" feature: it imports the transport (bot), whose routes, requests, Sender and checkpoint check (Request.CheckCheckpoint) it uses, and the rendering leaf; the engine, the streams' lists and the channels' defaults are ports it declares"},
	"bot/start":             {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the start form feature (/research without text, the two shortcuts, the form's submission): it imports the transport (bot), whose routes (Routes.Shortcut), Sender and one way to start a run (Request.StartResearch) it uses, and the rendering leaf; the channels' defaults are a port (bot.ChannelDefaults) it is given"},
	"bot/share":             {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the share feature (a report from the assistant panel to a channel): it imports the transport (bot), whose routes, requests, Sender and reading of the assistant panel's threads it uses, and the rendering leaf; the engine and what it remembers are ports it declares"},
	"bot/sharedfiles":       {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "files shared in a run's thread: it imports the transport (bot), whose mention routing (bot.RunMessageHandler), requests, Sender, approver rule (Request.MayDecide) and reading of shared files with the bot token (Request.ReadSharedFiles) it uses, and the rendering leaf; the engine is a port it declares"},
	"bot/steering":          {[]string{"bot", "bot/blockkit", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "internal/obs", "extract"}, "the steering feature (a note in an unfinished run's thread for its next steps): it imports the transport (bot), whose mention routing (bot.RunMessageHandler), requests, Sender, rate-limit counter and approver rule (Request.MayDecide) it uses, and the rendering leaf; the engine and the rate budget are ports it declares"},
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
	"internal/app/roles":    {[]string{"internal/app", "bot", "bot/blockkit", "bot/streams", "bot/assistant", "bot/clarify", "bot/decisions", "bot/feedback", "bot/followups", "bot/home", "bot/neverdomain", "bot/share", "bot/sharedfiles", "bot/start", "bot/steering", "bot/workspacesearch", "internal/obs", "internal/tracing", "config", "pipeline", "checkpoints", "scheduler", "textmatch", "dedup", "llm", "search", "search/mcpsearch", "search/docsearch", "fetch", "extract", "redisstore", "internal/retryafter"}, "the assembly of a process: internal/app's engine plus the roles a command asks for (Slack, workers, scheduler, HTTP, a foreground job), each part run and stopped by one owner; it knows every adapter and plugs bot's features into it, but knows no terminal and no command"},
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
	{"github.com/redis/go-redis/", []string{"redisstore", "internal/app", "cmd/researchbot", "internal/redistest", "bot/bottest"}, "Redis has one room: redisstore; consumers declare ports (rate budget, page cache, Slack memory); the test helpers start a Redis (redistest) and hand its client to tests (bot/bottest)"},
	{"github.com/go-redis/redis_rate/", []string{"redisstore", "internal/app", "cmd/researchbot"}, "one rate limiter, one key scheme (rb:rate:<area>:<key>), in redisstore"},
	{"github.com/alicebob/miniredis/", []string{"redisstore", "internal/app", "cmd/researchbot"}, "the embedded Redis is how redisstore connects without REDIS_URL"},
	{"github.com/slack-go/slack", []string{"bot", "bot/blockkit", "bot/streams", "bot/assistant", "bot/clarify", "bot/decisions", "bot/feedback", "bot/followups", "bot/home", "bot/neverdomain", "bot/share", "bot/sharedfiles", "bot/start", "bot/steering", "bot/workspacesearch", "bot/bottest", "internal/slackfake", "cmd/researchbot"}, "Slack has one room: bot/... (bot's rendering leaf uses the Block Kit types; a feature builds blocks and reads the clicks it routes; workspace search is a Searcher under bot; the fake stands in for Slack in tests, and bot/bottest drives it as Slack would)"},
	{"go.opentelemetry.io/otel", []string{"internal/tracing", "internal/app", "cmd/researchbot"}, "OpenTelemetry has one room: internal/tracing (API, SDK and OTLP exporter); the engine sees the pipeline.Tracer port and llm, search, fetch and bot stay free of it: their spans are made around their calls by the wiring (adapters' hooks, an http.RoundTripper), so no package but the adapter changes when the tracing library does"},
	{"github.com/modelcontextprotocol/go-sdk", []string{"search/mcpsearch", "internal/mcpfake", "internal/app", "cmd/researchbot"}, "MCP has one room: mcpsearch calls only the configured tools of a server; the engine sees search backends and documents (and the fake server stands in for MCP servers in tests)"},
	{"github.com/fumiama/go-docx", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "cmd/researchbot"}, "Word documents are read in extract only, behind its zip-bomb check"},
	{"github.com/markusmobius/go-trafilatura", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "cmd/researchbot"}, "HTML main-text extraction has one room: extract, behind its pruning budgets, text cap and panic guard; fetched pages, shared files, --file and the document collection all read HTML through it"},
	{"github.com/JohannesKaufmann/html-to-markdown/", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "cmd/researchbot"}, "HTML is rendered as Markdown in extract only, the same way for a fetched page and a shared file"},
	{"github.com/ledongthuc/pdf", []string{"extract", "fetch", "search/docsearch", "internal/app", "bot", "cmd/researchbot"}, "PDF parsing has one room: extract, behind its bounds (bytes, pages, decompressed bytes, deadline) and its panic guard"},
	{"github.com/blevesearch/", []string{"search/docsearch", "internal/app", "cmd/researchbot"}, "full-text indexing has one room: docsearch keeps the document collection's index (bleve, BM25) and its on-disk layout; the engine sees a search backend and documents read by address"},
	{"github.com/sashabaranov/go-openai", []string{"llm", "internal/app", "cmd/researchbot"}, "the OpenAI SDK stays in llm; the domain sees pipeline.Model"},
}

// features are bot's features, each with what it is: a feature imports the
// transport (bot: the routes it registers, the requests it answers, the
// Sender it posts with) and the rendering leaf (bot/blockkit), and no other
// feature; bot imports no feature: the assembly (internal/app/roles) builds
// each and plugs it into bot.Config. Every package under bot/ is a feature
// but the two that are not the App's: bot/blockkit, the rendering leaf (it
// knows no transport: see leaves), and bot/workspacesearch, a
// pipeline.Searcher the assembly gives the engine (it knows no transport:
// see inward). A feature reaches the libraries bot's rooms hold through bot;
// it imports one itself only where the room names it.
var features = map[string]string{
	"bot/assistant":   "the assistant panel: its own events (assistant_thread_started, assistant_thread_context_changed), plugged in as bot.Config.Assistant (bot.Assistant: the App asks it first about a message in a direct-message thread); starting a research and what waits on whom are bot's rules (bot.Request.StartResearch, bot.Request.PendingDecisions), the panel's calls and threads bot's (bot.AssistantPanel, shared with the Presenter's status); the memory and the streams are its ports",
	"bot/streams":     "research streams, the most self-contained feature: it registers its own routes (bot.StreamHandler) and takes the mentions in its conversations (bot.MentionHandler)",
	"bot/clarify":     "a clarifying question answered by a mention in the run's thread: the App asks it (bot.RunMessageHandler in bot.Config.Clarify) first; who may answer is bot's rule (bot.Request.MayDecide) and the answer is recorded the App's way (bot.Request.Decide); the engine's Load is its port",
	"bot/feedback":    "the verdicts on reports, digests and follow-up answers: its own buttons and form (bot.Registrar in bot.Config.Features), the engine's Load and RecordVerdict as its port",
	"bot/decisions":   "what a person does with a checkpoint message: Approve, Edit and Reject, their forms, Skip, Retry and Continue without it (bot.Registrar in bot.Config.Features; the forms open on the App's fast path, bot.Routes.FormAction); who may decide, whether the checkpoint is current and recording the decision are bot's rules (bot.Request.CheckCheckpoint, bot.Request.Decide), adopting a clicked message the Presenter's memory (bot.Request.AdoptClickedMessage); the engine's Opened, Skip, Retry and ContinueWithout and the Home told of a decision in a form are its ports",
	"bot/home":        "the App Home and the checkpoint definitions' admin reached from it: its own event, buttons and form, plugged in as bot.Config.Home (bot.Home: the App tells it of clicks on the tab; bot/decisions, through its own port, of decisions in forms); what waits on whom is bot's rule (bot.Request.WaitingOn), the runs, the published Homes, the definitions and the streams are its ports",
	"bot/neverdomain": "the source review's \"Never use a site…\": its own menu route (bot.Registrar in bot.Config.Features); who may decide the checkpoint is bot's rule (bot.Request.CheckCheckpoint), the engine, streams' and channels' never lists are its ports",
	"bot/start":       "the start form: /research without text and the shortcuts \"Start research\" and \"Research this\" (bot.Registrar in bot.Config.Features, Routes.Shortcut); starting the run is bot's (bot.Request.StartResearch), the channels' remembered settings are its port",
	"bot/followups":   "follow-up questions in a finished run's thread and their \"Research this\": the App asks it (bot.RunMessageHandler in bot.Config.FollowUps) after steering; its button is its own route (bot.Registrar in bot.Config.Features); a new research starts through the transport (bot.Request.StartResearch); the engine's Load and Ask and the rate budget are its ports",
	"bot/sharedfiles": "files shared in a run's thread, added before it searches: the App asks it first (bot.RunMessageHandler in bot.Config.Files); who may add is bot's rule (bot.Request.MayDecide); downloading and reading with the bot token stay the transport's (bot.Request.ReadSharedFiles), shared with the start form's files; the engine's Load and AttachFiles are its ports",
	"bot/steering":    "steering notes for unfinished runs: the App asks it (bot.RunMessageHandler in bot.Config.Steering) before follow-ups; who may steer is bot's rule (bot.Request.MayDecide); the engine's Load and Steer and the rate budget are its ports",
	"bot/share":       "sharing a report from the assistant panel to a channel: its own buttons and form (bot.Registrar in bot.Config.Features), the shares remembered as its port; the offer under the report stays the Presenter's",
}

// notFeatures are the packages under bot/ that are not features, and why.
var notFeatures = map[string]string{
	"bot/blockkit":        "the rendering leaf: pure functions from the domain's types to Block Kit, imported by bot and every feature",
	"bot/workspacesearch": "the Slack workspace as a pipeline.Searcher for the engine, built by the assembly: no part of the App",
	"bot/bottest":         "test support, imported only by tests: the features' tests run a real bot.App through it (it imports bot and may plug in any feature a test gives it, but imports none)",
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

// listed is what `go list -e -json` says of a package.
type listed struct {
	ImportPath string
	Deps       []string
	Imports    []string
	Error      *struct{ Err string }
}

// list returns every package of the module as `go list -e` lists it
// (module-relative, with its non-standard dependencies and imports). A
// package go list finds in error (an import cycle, say) fails the test and
// is listed all the same, so a dependency that makes a cycle (bot importing
// a feature that imports bot) is also named by the rule it breaks.
func list(t *testing.T) map[string]listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-json=ImportPath,Deps,Imports,Error", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(ps []string) []string {
		var ds []string
		for _, d := range ps {
			if strings.HasPrefix(d, module) || thirdParty(d) {
				ds = append(ds, strings.TrimPrefix(d, module))
			}
		}
		return ds
	}
	all := map[string]listed{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list: %v", err)
		}
		if p.Error != nil {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		p.Deps, p.Imports = rel(p.Deps), rel(p.Imports)
		all[p.ImportPath] = p
	}
	return all
}

// deps returns every package of the module with its transitive
// non-standard dependencies (module-relative for the module's own), as
// `go list -deps` lists them.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	all := map[string][]string{}
	for pkg, p := range list(t) {
		all[pkg] = p.Deps
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
	for pkg, p := range list(t) {
		for _, r := range rooms {
			if _, ok := assemblers[pkg]; ok || slices.Contains(r.only, pkg) {
				continue
			}
			in := func(d string) bool { return strings.HasPrefix(d, r.lib) }
			if _, ok := features[pkg]; ok && slices.Contains(r.only, "bot") {
				// Through bot, where bot may; not by its own import.
				if i := slices.IndexFunc(p.Imports, in); i >= 0 {
					t.Errorf("feature %s imports %s itself (only %v may; a feature reaches it through bot): %s", pkg, p.Imports[i], r.only, r.why)
				}
				continue
			}
			if _, ok := testSupport[pkg]; ok {
				// Test support runs product packages as they are (bot/bottest
				// runs a bot.App on redisstore's memory): it reaches their
				// libraries through them, not by its own import.
				if i := slices.IndexFunc(p.Imports, in); i >= 0 {
					t.Errorf("test support %s imports %s itself (only %v may): %s", pkg, p.Imports[i], r.only, r.why)
				}
				continue
			}
			if i := slices.IndexFunc(p.Deps, in); i >= 0 {
				t.Errorf("%s depends on %s (only %v may): %s", pkg, p.Deps[i], r.only, r.why)
			}
		}
	}
}

// featureProblems checks the features feats in all (package → its
// dependencies): every package under bot/ is a feature or named as none, a
// feature imports the transport and depends on no other feature, and bot
// depends on no feature.
func featureProblems(all map[string][]string, feats map[string]string) []string {
	var problems []string
	for pkg := range all {
		_, f := feats[pkg]
		_, nf := notFeatures[pkg]
		if strings.HasPrefix(pkg, "bot/") && !f && !nf {
			problems = append(problems, pkg+" is under bot/ but neither a feature nor named as none: say which (archtest's features or notFeatures) and why")
		}
	}
	for f, why := range feats {
		ds, ok := all[f]
		if !ok {
			problems = append(problems, "archtest names the feature "+f+", which does not exist")
			continue
		}
		if !slices.Contains(ds, "bot") {
			problems = append(problems, f+" does not import the transport (bot): a package under bot/ that is no part of the App is no feature ("+why+")")
		}
		for _, d := range ds {
			if _, other := feats[d]; other {
				problems = append(problems, f+" depends on "+d+": features import the transport (bot) and the rendering leaf, not each other; what two features share belongs in bot or bot/blockkit")
			}
		}
	}
	for _, core := range []string{"bot", "bot/blockkit"} {
		for _, d := range all[core] {
			if _, ok := feats[d]; ok {
				problems = append(problems, core+" depends on the feature "+d+": the transport and its leaf know no feature; the assembly (internal/app/roles) builds each and plugs it into bot.Config")
			}
		}
	}
	slices.Sort(problems)
	return problems
}

func TestFeaturesImportTheTransportNotEachOther(t *testing.T) {
	for _, p := range featureProblems(deps(t), features) {
		t.Error(p)
	}
}

// TestFeatureRuleFires: featureProblems names bot depending on a feature,
// a feature depending on another, a feature without the transport and a
// package under bot/ that is not classified; the module as it is names
// none (TestFeaturesImportTheTransportNotEachOther).
func TestFeatureRuleFires(t *testing.T) {
	all := deps(t)
	bad := map[string][]string{}
	for pkg, ds := range all {
		bad[pkg] = ds
	}
	bad["bot"] = append(slices.Clone(all["bot"]), "bot/streams")
	bad["bot/unsorted"] = []string{"bot"}
	got := strings.Join(featureProblems(bad, features), "\n")
	for _, want := range []string{"bot depends on the feature bot/streams", "bot/unsorted is under bot/ but neither a feature"} {
		if !strings.Contains(got, want) {
			t.Errorf("the feature rule does not say %q; it says:\n%s", want, got)
		}
	}
	two := map[string]string{"bot/streams": features["bot/streams"], "bot/other": "a second feature, for this test"}
	bad = map[string][]string{"bot/streams": {"bot", "bot/other"}, "bot/other": {"bot/blockkit"}}
	got = strings.Join(featureProblems(bad, two), "\n")
	for _, want := range []string{"bot/streams depends on bot/other: features import the transport", "bot/other does not import the transport"} {
		if !strings.Contains(got, want) {
			t.Errorf("the feature rule does not say %q; it says:\n%s", want, got)
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
