// Package config reads researchbot's settings from the environment, fills in
// defaults, and reports every problem at once.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Config is every setting of researchbot.
type Config struct {
	// Slack (serve only).
	SlackAppToken string
	SlackBotToken string
	SlackAPIURL   string
	// Approvers maps a channel id to the users who may decide checkpoints there
	// besides the run's requester.
	Approvers map[string][]string
	// Admins are the Slack user ids who manage checkpoint definitions in the
	// App Home, besides the workspace's admins and owners.
	Admins []string
	// ReviewSources lists the channels whose guided runs ask for the source
	// review by default ("*": every channel).
	ReviewSources []string
	// StreamInChannels streams a run's plan in its channel thread too
	// (assistant threads always get it where the workspace has the feature).
	StreamInChannels bool
	// ProgressInterval is the least time between two progress updates of a
	// run (an edit of the progress message or an append to its stream).
	ProgressInterval time.Duration
	// WorkspaceSearch searches the Slack workspace with Slack's Real-time
	// Search API on behalf of the person who asked (SLACK_WORKSPACE_SEARCH).
	WorkspaceSearch bool
	// WorkspaceSearchChannels are the only channels whose runs search the
	// workspace; empty or "*" means every channel
	// (SLACK_WORKSPACE_SEARCH_CHANNELS).
	WorkspaceSearchChannels []string
	// Rate limits on /research, per user and per workspace, per hour.
	UserRunsPerHour int
	TeamRunsPerHour int

	// LLM.
	OpenAIAPIKey  string
	OpenAIBaseURL string
	Model         string            // default model for every role
	RoleModels    map[string]string // role → model overrides
	Prices        map[string]Price  // model → price overrides
	LLMTimeout    time.Duration
	// LLMStepWait bounds one step's total wait for a model that does not answer.
	LLMStepWait   time.Duration
	LLMMaxRetries int
	LLMPerMinute  int // requests per minute across replicas; 0 = unlimited
	// LLMStartupCheck: serve, worker and run ask the endpoint for its
	// models at start and stop with the cause when it does not answer.
	LLMStartupCheck bool

	// State.
	RedisURL string

	// Sources.
	SearXNGURL    string
	BraveAPIKey   string
	BraveURL      string
	TavilyAPIKey  string
	TavilyURL     string
	ArxivURL      string
	WikipediaURL  string
	OpenAlexURL   string
	CrossrefURL   string
	Contact       string // e-mail or URL sent to public APIs with the User-Agent
	AllowPrivate  bool
	FetchTimeout  time.Duration
	FetchMaxBytes int64
	FetchCacheTTL time.Duration
	// MCPServers are the MCP servers searched beside the web (MCP_SERVERS).
	MCPServers []MCPServer
	// DocsDirs are the folders of the document collection searched beside
	// the web (DOCS_DIR, separated like PATH); none means no collection.
	DocsDirs []string
	// DocsIndexDir is where the collection's full-text index lives
	// (DOCS_INDEX_DIR; by default under the user cache directory).
	DocsIndexDir string
	// DocsCheckInterval is how often serve and worker look for added,
	// changed and removed documents (DOCS_CHECK_INTERVAL).
	DocsCheckInterval time.Duration

	// Run limits (defaults for every run).
	MaxCostUSD      float64
	MaxWall         time.Duration
	MaxIterations   int
	MaxGapRounds    int
	MaxSources      int
	MaxSourceTokens int
	MaxSearchErrors int

	// Writing (defaults for every run).
	StyleGuide   string // the house style, as text ("" = the writer's own)
	TargetLength int    // words; 0 = by depth

	// Process.
	WorkerConcurrency int
	// LeaseTTL is how long a worker's hold on a run lasts unless refreshed;
	// after a crash another worker may take the run over after this long.
	LeaseTTL time.Duration
	// Retention is how long a finished run is kept; PageRetention how long
	// its extracted page texts are (at most Retention).
	Retention     time.Duration
	PageRetention time.Duration
	HTTPAddr      string
	LogLevel      string
	LogFormat     string
}

// Price is USD per million input and output tokens.
type Price struct{ In, Out float64 }

// Roles that may have their own model (LLM_MODEL_<ROLE>).
var roles = []string{"planner", "ranker", "analyst", "writer", "reviewer", "streams"}

// Load reads the configuration through getenv and returns every problem at
// once (joined), or nil.
func Load(getenv func(string) string) (Config, error) {
	p := &parser{getenv: getenv}
	c := Config{
		SlackAppToken:           p.str("SLACK_APP_TOKEN", ""),
		SlackBotToken:           p.str("SLACK_BOT_TOKEN", ""),
		SlackAPIURL:             p.url("SLACK_API_URL", "https://slack.com/api/"),
		UserRunsPerHour:         p.int("RATE_LIMIT_USER_PER_HOUR", 10, 1),
		TeamRunsPerHour:         p.int("RATE_LIMIT_TEAM_PER_HOUR", 100, 1),
		OpenAIAPIKey:            p.str("OPENAI_API_KEY", ""),
		OpenAIBaseURL:           p.url("OPENAI_BASE_URL", "https://api.openai.com/v1"),
		Model:                   p.str("LLM_MODEL", "gpt-4o-mini"),
		LLMTimeout:              p.dur("LLM_TIMEOUT", 120*time.Second, true),
		LLMStepWait:             p.dur("LLM_STEP_WAIT", 5*time.Minute, true),
		LLMMaxRetries:           p.int("LLM_MAX_RETRIES", 4, 0),
		LLMPerMinute:            p.int("LLM_REQUESTS_PER_MINUTE", 0, 0),
		LLMStartupCheck:         p.bool("LLM_STARTUP_CHECK", true),
		RedisURL:                p.redisURL("REDIS_URL"),
		SearXNGURL:              p.url("SEARXNG_URL", ""),
		BraveAPIKey:             p.str("BRAVE_API_KEY", ""),
		BraveURL:                p.url("BRAVE_URL", ""),
		TavilyAPIKey:            p.str("TAVILY_API_KEY", ""),
		TavilyURL:               p.url("TAVILY_URL", ""),
		ArxivURL:                p.url("ARXIV_URL", ""),
		WikipediaURL:            p.url("WIKIPEDIA_URL", ""),
		OpenAlexURL:             p.url("OPENALEX_URL", ""),
		CrossrefURL:             p.url("CROSSREF_URL", ""),
		Contact:                 p.str("SEARCH_CONTACT", ""),
		AllowPrivate:            p.bool("FETCH_ALLOW_PRIVATE_NETWORKS", false),
		FetchTimeout:            p.dur("FETCH_TIMEOUT", 20*time.Second, true),
		FetchMaxBytes:           int64(p.int("FETCH_MAX_BYTES", 5<<20, 1024)),
		FetchCacheTTL:           p.dur("FETCH_CACHE_TTL", 24*time.Hour, false),
		MCPServers:              p.mcpServers("MCP_SERVERS"),
		DocsDirs:                p.docsDirs("DOCS_DIR"),
		DocsCheckInterval:       p.boundedDur("DOCS_CHECK_INTERVAL", 10*time.Minute, time.Minute, 24*time.Hour),
		MaxCostUSD:              p.float("RUN_MAX_COST_USD", 2),
		MaxWall:                 p.dur("RUN_MAX_WALL", 30*time.Minute, false),
		MaxIterations:           p.int("RUN_MAX_ITERATIONS", 3, 1),
		MaxGapRounds:            p.int("RUN_MAX_GAP_ROUNDS", 2, 0),
		MaxSources:              p.int("RUN_MAX_SOURCES", 0, 0),
		MaxSourceTokens:         p.int("RUN_MAX_SOURCE_TOKENS", 30000, 1000),
		MaxSearchErrors:         p.int("RUN_MAX_SEARCH_ERRORS", 3, 1),
		StyleGuide:              p.styleGuide("RUN_STYLE_GUIDE"),
		TargetLength:            p.targetLength("RUN_TARGET_LENGTH"),
		WorkerConcurrency:       p.int("WORKER_CONCURRENCY", 8, 1),
		LeaseTTL:                p.dur("RUN_LEASE", 15*time.Second, true),
		Retention:               p.dur("RUN_RETENTION", 30*24*time.Hour, true),
		PageRetention:           p.dur("RUN_PAGE_RETENTION", 7*24*time.Hour, true),
		HTTPAddr:                p.str("HTTP_ADDR", ":8080"),
		LogLevel:                p.oneOf("LOG_LEVEL", "info", "debug", "info", "warn", "error"),
		LogFormat:               p.oneOf("LOG_FORMAT", "text", "text", "json"),
		Approvers:               p.approvers("SLACK_APPROVERS"),
		Admins:                  p.userIDs("SLACK_ADMINS"),
		ReviewSources:           p.channelIDs("SLACK_REVIEW_SOURCES"),
		StreamInChannels:        p.bool("SLACK_STREAM_IN_CHANNELS", false),
		WorkspaceSearch:         p.bool("SLACK_WORKSPACE_SEARCH", false),
		WorkspaceSearchChannels: p.channelIDs("SLACK_WORKSPACE_SEARCH_CHANNELS"),
		ProgressInterval:        p.dur("SLACK_PROGRESS_INTERVAL", 3*time.Second, true),
		Prices:                  p.prices("LLM_PRICES"),
		RoleModels:              map[string]string{},
	}
	if c.LeaseTTL < time.Second {
		// Refreshed every third, with network timeouts of at least 500 ms:
		// shorter leases would be lost on an ordinary hiccup.
		p.bad("RUN_LEASE", "want at least 1s, got %s", c.LeaseTTL)
		c.LeaseTTL = 15 * time.Second
	}
	c.DocsIndexDir = p.docsIndexDir("DOCS_INDEX_DIR", c.DocsDirs)
	for _, r := range roles {
		if m := p.str("LLM_MODEL_"+strings.ToUpper(r), ""); m != "" {
			c.RoleModels[r] = m
		}
	}
	return c, errors.Join(p.problems...)
}

// ModelFor returns the model of a role.
func (c Config) ModelFor(role string) string {
	if m := c.RoleModels[role]; m != "" {
		return m
	}
	return c.Model
}

// CheckLLM reports what is missing to call the LLM.
func (c Config) CheckLLM() error {
	if c.OpenAIAPIKey == "" && strings.Contains(c.OpenAIBaseURL, "api.openai.com") {
		return errors.New("OPENAI_API_KEY is not set: set it, or point OPENAI_BASE_URL at a local OpenAI-compatible server")
	}
	return nil
}

// CheckSlack reports what is missing to connect to Slack, every problem at once.
func (c Config) CheckSlack() error {
	var errs []error
	switch {
	case c.SlackAppToken == "":
		errs = append(errs, errors.New("SLACK_APP_TOKEN is not set (an app-level token, xapp-…, with connections:write)"))
	case !strings.HasPrefix(c.SlackAppToken, "xapp-"):
		errs = append(errs, errors.New("SLACK_APP_TOKEN must be an app-level token starting with xapp-"))
	}
	switch {
	case c.SlackBotToken == "":
		errs = append(errs, errors.New("SLACK_BOT_TOKEN is not set (the bot token, xoxb-…)"))
	case !strings.HasPrefix(c.SlackBotToken, "xoxb-"):
		errs = append(errs, errors.New("SLACK_BOT_TOKEN must be a bot token starting with xoxb-"))
	}
	return errors.Join(errs...)
}

type parser struct {
	getenv   func(string) string
	problems []error
}

func (p *parser) bad(name, format string, args ...any) {
	p.problems = append(p.problems, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
}

func (p *parser) str(name, def string) string {
	if v := strings.TrimSpace(p.getenv(name)); v != "" {
		return v
	}
	return def
}

func (p *parser) int(name string, def, minimum int) int {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minimum {
		p.bad(name, "want a whole number of at least %d, got %q", minimum, v)
		return def
	}
	return n
}

func (p *parser) float(name string, def float64) float64 {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		p.bad(name, "want a non-negative number, got %q", v)
		return def
	}
	return f
}

func (p *parser) dur(name string, def time.Duration, positive bool) time.Duration {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (positive && d == 0) {
		p.bad(name, "want a duration such as 30s or 2h, got %q", v)
		return def
	}
	return d
}

func (p *parser) bool(name string, def bool) bool {
	v := p.str(name, "")
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.bad(name, "want true or false, got %q", v)
		return def
	}
	return b
}

func (p *parser) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(p.str(name, def))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.bad(name, "want one of %s, got %q", strings.Join(allowed, ", "), v)
	return def
}

func (p *parser) url(name, def string) string {
	v := p.str(name, def)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.bad(name, "want an http(s) URL, got %q", v)
		return def
	}
	return v
}

func (p *parser) redisURL(name string) string {
	v := p.str(name, "")
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		p.bad(name, "want redis://host:port/db or rediss://…, got a value that is not one")
		return ""
	}
	return v
}

// Style guide limits and presets.
const maxStyleGuideRunes = 4000

// stylePresets are the seed's named styles (seed 001: academic, technical,
// executive), as guides the writer can follow.
var stylePresets = map[string]string{
	"academic":  "Academic: formal and precise; define terms on first use; state methods and limitations; hedge only where the evidence is uncertain.",
	"technical": "Technical: direct and concrete; lead with specifications, figures and trade-offs; use lists where they help the reader compare.",
	"executive": "Executive: lead with the conclusion and what it means for a decision; short paragraphs; plain words; figures only where they matter.",
}

// styleGuide reads the house style: a preset name, a file path (a value
// starting with "/", "./" or "../", or ending in .md or .txt, on one line),
// or the guide's text itself.
func (p *parser) styleGuide(name string) string {
	v := p.str(name, "")
	if v == "" {
		return ""
	}
	if preset, ok := stylePresets[strings.ToLower(v)]; ok {
		return preset
	}
	if looksLikePath(v) {
		b, err := os.ReadFile(v)
		if err != nil {
			p.bad(name, "cannot read the style guide file: %v", err)
			return ""
		}
		v = strings.TrimSpace(string(b))
		if v == "" {
			p.bad(name, "the style guide file is empty")
			return ""
		}
	}
	if n := utf8.RuneCountInString(v); n > maxStyleGuideRunes {
		p.bad(name, "the style guide is %d characters long; the limit is %d", n, maxStyleGuideRunes)
		return ""
	}
	return v
}

// looksLikePath reports whether a one-line value names a file.
func looksLikePath(v string) bool {
	if strings.ContainsAny(v, "\n") {
		return false
	}
	lower := strings.ToLower(v)
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		(!strings.Contains(v, " ") && (strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".txt")))
}

// targetLength reads a report length in words: 0 (by depth) or 100–20000.
func (p *parser) targetLength(name string) int {
	v := p.str(name, "")
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 || n > 20000 {
		p.bad(name, "want a number of words from 100 to 20000, got %q", v)
		return 0
	}
	return n
}

// channelIDs parses "C1,C2" (Slack conversation ids) or "*".
func (p *parser) channelIDs(name string) []string {
	return p.idList(name, "channel ids such as C012AB3CD, separated by commas, or *", func(c string) bool {
		return c == "*" || len(c) > 1 && strings.ContainsRune("CGD", rune(c[0])) && strings.ToUpper(c) == c
	})
}

// userIDs parses "U1,U2" (Slack user ids).
func (p *parser) userIDs(name string) []string {
	return p.idList(name, "user ids such as U012AB3CD, separated by commas", isUserID)
}

// idList parses a comma-separated list of Slack ids, keeping those valid
// accepts and reporting each other one as not what the variable wants.
func (p *parser) idList(name, want string, valid func(string) bool) []string {
	var out []string
	for _, id := range strings.Split(p.str(name, ""), ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "":
		case valid(id):
			out = append(out, id)
		default:
			p.bad(name, "want Slack %s, got %q", want, id)
		}
	}
	return out
}

// isUserID reports whether s looks like a Slack user id (U… or W…).
func isUserID(s string) bool {
	if len(s) < 2 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, c := range s[1:] {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// approvers parses "C1=U1,U2;C2=U3".
func (p *parser) approvers(name string) map[string][]string {
	out := map[string][]string{}
	v := p.str(name, "")
	if v == "" {
		return out
	}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		ch, users, ok := strings.Cut(part, "=")
		ch = strings.TrimSpace(ch)
		if !ok || ch == "" {
			p.bad(name, "want CHANNEL=USER,USER;…, got %q", part)
			continue
		}
		for _, u := range strings.Split(users, ",") {
			if u = strings.TrimSpace(u); u != "" {
				out[ch] = append(out[ch], u)
			}
		}
	}
	return out
}

// prices parses "model=in/out,model2=in/out".
func (p *parser) prices(name string) map[string]Price {
	out := map[string]Price{}
	v := p.str(name, "")
	if v == "" {
		return out
	}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		model, pr, ok := strings.Cut(part, "=")
		in, outS, ok2 := strings.Cut(pr, "/")
		fi, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
		fo, err2 := strconv.ParseFloat(strings.TrimSpace(outS), 64)
		if !ok || !ok2 || err1 != nil || err2 != nil || fi < 0 || fo < 0 || strings.TrimSpace(model) == "" {
			p.bad(name, "want model=in/out (USD per million tokens), got %q", part)
			continue
		}
		out[strings.TrimSpace(model)] = Price{In: fi, Out: fo}
	}
	return out
}
