package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Variable is one row of the configuration table: one environment variable,
// or several that share a meaning (the per-role models).
type Variable struct {
	Names []string
	// Default is the value used when the variable is unset, written as a
	// value the variable accepts; "" when there is none.
	Default string
	// DefaultText describes a default that is not a value (“embedded”, “by
	// depth (6 / 12 / 20)”); it is shown instead of Default.
	DefaultText string
	Meaning     string
	// Secret values are masked wherever they are shown.
	Secret bool
}

// Variables is the configuration table: every variable researchbot reads,
// in the order `researchbot env` and docs/configuration.md list them. Load reads
// exactly these (a test holds both to it), and that file's table is
// rendered from it (MarkdownTable).
func Variables() []Variable {
	one := func(name, def, meaning string) Variable {
		return Variable{Names: []string{name}, Default: def, Meaning: meaning}
	}
	secret := func(name, meaning string) Variable {
		return Variable{Names: []string{name}, Meaning: meaning, Secret: true}
	}
	described := func(names []string, text, meaning string) Variable {
		return Variable{Names: names, DefaultText: text, Meaning: meaning}
	}
	roleModels := make([]string, len(roles))
	for i, r := range roles {
		roleModels[i] = "LLM_MODEL_" + strings.ToUpper(r)
	}
	return []Variable{
		secret("OPENAI_API_KEY", "key for the OpenAI-compatible endpoint (not needed for a local one such as Ollama)"),
		one("OPENAI_BASE_URL", "https://api.openai.com/v1", "endpoint base URL (OpenAI, Azure, Ollama, vLLM, LM Studio, …)"),
		one("LLM_MODEL", "gpt-4o-mini", "model for every role"),
		described(roleModels, "`LLM_MODEL`", "model for one role (`_STREAMS`: the stream-creation conversation)"),
		described([]string{"LLM_PRICES"}, "built-in table", "price overrides, `model=in/out,…` in USD per million tokens"),
		one("LLM_TIMEOUT", "120s", "timeout of one LLM call"),
		one("LLM_STEP_WAIT", "5m", "the longest one step of a run waits, over all its attempts, for a model that does not answer (timeouts, errors and the waits between retries); then the run ends with what it has, saying \"the model did not answer within …\""),
		one("LLM_MAX_RETRIES", "4", "retries of one LLM call on 429 (honouring `Retry-After`), 5xx, timeouts and connection errors; `0` means none. A step makes at most 3 attempts, so with the model down a run ends after at most 3 × (1 + retries) calls: under a minute with the defaults"),
		one("LLM_REQUESTS_PER_MINUTE", "0", "LLM request rate shared by all replicas; `0` means no limit"),
		one("LLM_STARTUP_CHECK", "true", "`serve`, `worker` and `run` ask the endpoint for its models (`GET /models`) at start and stop at once, saying why, when it does not answer or refuses the key; `false` skips the check (for endpoints without `/models`)"),
		{Names: []string{"REDIS_URL"}, DefaultText: "embedded", Meaning: "`redis://[:password@]host:6379/0` (`rediss://` for TLS), or a Redis watched by Sentinel: `redis://[:sentinel-password@]sentinel1:26379/0?master_name=mymaster&addr=sentinel2:26379&addr=sentinel3:26379[&password=master-password]` (go-redis's failover URL; store, queue and leases follow the master across failovers); unset means an in-process Redis whose state dies with the process", Secret: true},
		one("SEARXNG_URL", "", "a SearXNG instance (JSON API) for web, news and science search"),
		secret("BRAVE_API_KEY", "Brave Search API key (web and news)"),
		secret("TAVILY_API_KEY", "Tavily API key (web)"),
		described([]string{"ARXIV_URL", "WIKIPEDIA_URL", "OPENALEX_URL", "CROSSREF_URL", "BRAVE_URL", "TAVILY_URL"}, "public endpoints", "base URL of a search backend; setting one turns it on"),
		one("SEARCH_CONTACT", "", "e-mail sent with the User-Agent to public APIs (OpenAlex's and Crossref's polite pools)"),
		one("FETCH_ALLOW_PRIVATE_NETWORKS", "false", "`true` lets the fetcher reach private and loopback addresses (intranets, tests)"),
		one("FETCH_TIMEOUT", "20s", "total time to fetch one page"),
		one("FETCH_MAX_BYTES", "5242880", "largest page body, counted after decompression"),
		one("FETCH_CACHE_TTL", "24h", "how long a fetched page is reused"),
		one("MCP_SERVERS", "", "MCP servers searched beside the web: a JSON array, inline or in the file named (see “MCP servers as sources”). Each server's header values and stdio environment come from the variables the file names, never from the file; a stdio server gets `PATH`, `HOME` and those variables only"),
		one("DOCS_DIR", "", "folders of a document collection searched beside the web, separated by `:` (like `PATH`); its files (PDF, Word, Markdown, CSV, HTML, text) are indexed for full-text search and cited as `path/in/folder.pdf, p. 3`. Every person the bot serves can get its text in a report (see “Document collection”)"),
		described([]string{"DOCS_INDEX_DIR"}, "`researchbot/docs-index` in the user cache directory", "where the collection's full-text index is kept; one process at a time uses it"),
		one("DOCS_CHECK_INTERVAL", "10m", "how often `serve`, `worker` and `run` look for added, changed and removed documents (`1m`–`24h`); `researchbot docs index` does it at once"),
		one("RUN_MAX_COST_USD", "2", "spend limit of one run (0 = none)"),
		one("RUN_MAX_WALL", "30m", "working-time limit of one run; time waiting for people is not counted (0 = none)"),
		one("RUN_MAX_ITERATIONS", "3", "revisions, re-plans and search re-rounds of one run"),
		one("RUN_MAX_GAP_ROUNDS", "2", "extra search rounds to fill gaps the analysis finds"),
		described([]string{"RUN_MAX_SOURCES"}, "by depth (6 / 12 / 20)", "pages read per run"),
		one("RUN_MAX_SOURCE_TOKENS", "30000", "page text (estimated tokens) in one analysis; the best-ranked pages that fit are used, and the report says how many were left out"),
		one("RUN_MAX_SEARCH_ERRORS", "3", "searches that may fail (every backend erred and nothing was found; a search our own Redis or rate limiter could not make is retried and does not count, and so is a step whose every search our shared rate limit held back) before the run stops searching and writes the report from what it found, saying so"),
		one("RUN_STYLE_GUIDE", "", "house style for the writer and the reviewer: the text itself, a file (a value starting with `/`, `./` or `../`, or ending in `.md` or `.txt`), or `academic`, `technical` or `executive`; at most 4000 characters"),
		described([]string{"RUN_TARGET_LENGTH"}, "by depth (800 / 1500 / 2500)", "target length of a report in words (100–20000); the writer aims at it and the reviewer scores length against it"),
		one("RUN_LEASE", "15s", "a worker's lease on a run (at least `1s`); a crashed worker's runs are taken over within twice it. Redis timeouts are derived from it"),
		one("RUN_RETENTION", "720h", "how long a finished run is kept after it ends (30 days); a run that waits for a person never expires"),
		one("RUN_PAGE_RETENTION", "168h", "how long the page texts a finished run read are kept (7 days, at most `RUN_RETENTION`); after that the run and its report stay, without the texts of its pages"),
		one("WORKER_CONCURRENCY", "8", "runs one process advances at once"),
		secret("SLACK_APP_TOKEN", "app-level token (`xapp-…`) for Socket Mode (`serve`); checked at start with `apps.connections.open`"),
		secret("SLACK_BOT_TOKEN", "bot token (`xoxb-…`) for the Web API (`serve`, and `worker` for Slack runs); checked at start with `auth.test`"),
		one("SLACK_API_URL", "https://slack.com/api/", "Web API base URL, also used for `apps.connections.open`"),
		one("SLACK_APPROVERS", "", "who else may decide, per channel: `C123=U1,U2;C456=U3`"),
		one("SLACK_ADMINS", "", "Slack user ids who manage checkpoint definitions in the App Home and get breaker alerts and the escalation of a checkpoint whose reminders ran out, besides workspace admins and owners: `U1,U2`"),
		one("SLACK_REVIEW_SOURCES", "", "channels whose guided runs ask for the source review by default, as `--review-sources` does: `C123,C456`, or `*` for every channel"),
		one("SLACK_STREAM_IN_CHANNELS", "false", "`true` streams a run's plan (task cards turning from pending to complete, the pages read) in its channel thread to the requester, where the workspace has Slack's AI-app streaming, instead of the edited progress message; assistant threads always get it"),
		one("SLACK_PROGRESS_INTERVAL", "3s", "least time between two progress updates of one run (an edit of the progress message, or an append to its streamed plan); Slack's `chat.update` is tier 3 and `chat.appendStream` tier 4"),
		one("SLACK_WORKSPACE_SEARCH", "false", "`true` searches the Slack workspace (Slack's Real-time Search, `assistant.search.context`) on behalf of the person who asked, for runs started from a message (assistant thread, DM, @mention); sources a report's readers could not all read are withheld (see docs/sources.md)"),
		one("SLACK_WORKSPACE_SEARCH_CHANNELS", "", "the only channels (and DMs) whose runs search the workspace: `C123,D456`; empty or `*` for every one"),
		one("RATE_LIMIT_USER_PER_HOUR", "10", "`/research` runs one person may start per hour"),
		one("RATE_LIMIT_TEAM_PER_HOUR", "100", "`/research` runs one workspace may start per hour"),
		one("HTTP_ADDR", ":8080", "address of `/healthz`, `/readyz` and Prometheus `/metrics` (`serve` and `worker`)"),
		one("LOG_LEVEL", "info", "`debug`, `info`, `warn` or `error`; `debug` adds each step's start and end with its duration, and a summary of each LLM call (role, model, tokens, time; never the text)"),
		one("LOG_FORMAT", "text", "`text` or `json` (one JSON object per line, every line)"),
	}
}

// DefaultString is the default as people read it: DefaultText, Default, or
// "none".
func (v Variable) DefaultString() string {
	switch {
	case v.DefaultText != "":
		return strings.ReplaceAll(v.DefaultText, "`", "")
	case v.Default != "":
		return v.Default
	}
	return "none"
}

// Show is a value of v as `researchbot env` may print it: secrets masked
// (a token's type prefix and its length; a URL's password).
func (v Variable) Show(value string) string {
	if !v.Secret || value == "" {
		return value
	}
	if u, err := url.Parse(value); err == nil && u.Scheme != "" && u.Host != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	prefix := ""
	if i := strings.IndexByte(value, '-'); i > 0 && i <= 4 {
		prefix = value[:i+1]
	}
	return fmt.Sprintf("%s… (%d characters, masked)", prefix, len(value))
}
