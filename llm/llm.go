// Package llm is researchbot's client for OpenAI-compatible chat completion
// endpoints (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio, …).
//
// Its one operation, Client.Generate, makes a structured call: the JSON schema
// of a Go struct is derived, made OpenAI-strict and sent as the response
// format; the reply is validated against that schema and parsed into the
// struct, with exactly one repair round trip when the reply is invalid.
// Transient failures (429, 5xx, timeouts, connection errors) are retried with
// exponential backoff and jitter, honouring Retry-After. Every call reports its
// token usage and cost, also when it fails. Errors callers must branch on are
// typed: ErrContextLength, ErrQuota, *RefusalError, *InvalidOutputError and
// *APIError. No error or log line ever contains the API key.
package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"
	openai "github.com/sashabaranov/go-openai"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Limiter paces requests. Wait blocks until one request may be made or ctx
// ends.
type Limiter interface {
	Wait(ctx context.Context) error
}

// Config configures a Client.
type Config struct {
	// BaseURL of the OpenAI-compatible API, e.g. "https://api.openai.com/v1",
	// "http://localhost:11434/v1". Default DefaultBaseURL. An Azure OpenAI
	// resource URL (https://NAME.openai.azure.com) selects Azure's
	// deployment-based API, with Request.Model naming the deployment.
	BaseURL string
	// APIKey is sent as a bearer token (or Azure api-key). May be empty for
	// local servers.
	APIKey string
	// Timeout bounds every HTTP call. Default 120s.
	Timeout time.Duration
	// MaxRetries is how many times a transient failure is retried. Default 4;
	// negative means never retry.
	MaxRetries int
	// Prices by model name. Default DefaultPrices(). A model not found costs 0
	// and is flagged in Usage.UnknownPrice.
	Prices map[string]Price
	// Limiter paces every HTTP call (retries included). Nil means no pacing.
	Limiter Limiter
	// HTTPClient is used for HTTP calls. Default a new http.Client. Its own
	// Timeout, if any, applies in addition to Timeout.
	HTTPClient *http.Client
	// Logger receives retry and failure notes. Default discards.
	Logger *slog.Logger
	// Clock times the waits between retries (its timers are tagged "llm",
	// "retry") and reads Retry-After dates; nil means the real clock.
	// Tests pass a quartz mock and advance it instead of waiting.
	Clock quartz.Clock
}

// String describes the configuration without its API key, so that printing
// or logging a Config never leaks the secret.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "[redacted]"
	}
	return fmt.Sprintf("llm.Config{BaseURL: %q, APIKey: %s, Timeout: %s, MaxRetries: %d}", redact(c.BaseURL, c.APIKey), key, c.Timeout, c.MaxRetries)
}

// GoString is String, for %#v.
func (c Config) GoString() string { return c.String() }

// LogValue logs the configuration without its API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", redact(c.BaseURL, c.APIKey)),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Duration("timeout", c.Timeout),
		slog.Int("max_retries", c.MaxRetries),
	)
}

// Request is one structured generation.
type Request struct {
	Model      string
	System     string // system prompt; may be empty
	User       string // the user message
	SchemaName string // name of the json_schema response format, [a-zA-Z0-9_-]{1,64}; default derived from out's type
	// Temperature; 0 means the provider's default. Ignored for reasoning models
	// (o-series, gpt-5, gpt-6), which accept only their default.
	Temperature float32
	// MaxTokens bounds the reply (max_tokens, or max_completion_tokens for
	// reasoning models); 0 means the provider's default.
	MaxTokens int
	// OnRetry, when set, is called before each wait for a retry, so a caller
	// can show it ("model unavailable, retry 2 of 4 in 8 s").
	OnRetry func(Retry)
}

// Retry describes a retry Generate is about to make.
type Retry struct {
	N     int           // 1 for the first retry
	Max   int           // retries allowed (Config.MaxRetries)
	Wait  time.Duration // until the retry is sent
	Cause error         // the failure being retried
}

// Usage is what one Generate spent.
type Usage struct {
	Model            string // the model that answered (as reported by the provider)
	PromptTokens     int
	CompletionTokens int
	CostUSD          float64
	Calls            int  // HTTP calls made, including retries and the repair attempt
	UnknownPrice     bool // the model has no entry in the price table; CostUSD is 0 for it
}

// Client makes structured calls to an OpenAI-compatible API. It is safe for
// concurrent use.
type Client struct {
	api        *openai.Client
	apiKey     string
	timeout    time.Duration
	maxRetries int
	prices     map[string]Price
	limiter    Limiter
	log        *slog.Logger
	clock      quartz.Clock
	schemas    sync.Map // reflect.Type -> *compiledSchema
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	base = cmp.Or(base, DefaultBaseURL)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q must be an absolute http(s) URL", redact(base, cfg.APIKey))
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	doer := &recordingDoer{inner: hc}
	var oc openai.ClientConfig
	host := strings.ToLower(u.Hostname())
	azure := strings.HasSuffix(host, ".openai.azure.com") || strings.HasSuffix(host, ".cognitiveservices.azure.com")
	switch {
	case azure && !strings.Contains(u.Path, "/openai/v1"):
		oc = openai.DefaultAzureConfig(cfg.APIKey, strings.TrimRight(base, "/"))
	case azure:
		// Azure's OpenAI-compatible v1 API authenticates with an api-key header.
		oc = openai.DefaultConfig(cfg.APIKey)
		oc.BaseURL = strings.TrimRight(base, "/")
		doer.azureKey = cfg.APIKey
	default:
		oc = openai.DefaultConfig(cfg.APIKey)
		oc.BaseURL = strings.TrimRight(base, "/")
	}
	oc.HTTPClient = doer
	c := &Client{
		api:        openai.NewClientWithConfig(oc),
		apiKey:     cfg.APIKey,
		timeout:    cfg.Timeout,
		maxRetries: cfg.MaxRetries,
		prices:     cfg.Prices,
		limiter:    cfg.Limiter,
		log:        cfg.Logger,
		clock:      cfg.Clock,
	}
	if c.timeout <= 0 {
		c.timeout = 120 * time.Second
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = 4
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.prices == nil {
		c.prices = DefaultPrices()
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.clock == nil {
		c.clock = quartz.NewReal()
	}
	return c, nil
}

// schemaNameRE is what OpenAI accepts as a response format name.
var schemaNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

// Generate makes one structured call. out must be a pointer to a struct; its
// strict JSON schema is sent as response_format json_schema, and the reply is
// validated against it and parsed into out. An invalid reply gets exactly one
// repair attempt (the bad output is sent back with the problems found). out
// is only written when the call succeeds. The Usage is returned even when err
// != nil: tokens already spent count.
func (c *Client) Generate(ctx context.Context, req Request, out any) (Usage, error) {
	usage := Usage{Model: req.Model}
	rv := reflect.ValueOf(out)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return usage, fmt.Errorf("llm: out must be a non-nil pointer to a struct, got %T", out)
	}
	if req.Model == "" {
		return usage, errors.New("llm: request has no model")
	}
	name := req.SchemaName
	if name == "" {
		name = sanitizeName(rv.Elem().Type().Name())
	}
	if !schemaNameRE().MatchString(name) {
		return usage, fmt.Errorf("llm: schema name %q must match [a-zA-Z0-9_-]{1,64}", name)
	}
	sch, err := c.schemaFor(rv.Elem().Type())
	if err != nil {
		return usage, err
	}

	var msgs []openai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.User})

	content, finish, err := c.complete(ctx, req, name, sch, msgs, &usage)
	if err != nil {
		return usage, err
	}
	problems := decodeInto(content, finish, sch, rv)
	if len(problems) == 0 {
		return usage, nil
	}
	c.log.DebugContext(ctx, "llm: invalid structured output, repairing", "model", req.Model, "schema", name, "problems", len(problems))

	msgs = append(msgs,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: repairPrompt(problems)},
	)
	content, finish, err = c.complete(ctx, req, name, sch, msgs, &usage)
	if err != nil {
		return usage, err
	}
	problems = decodeInto(content, finish, sch, rv)
	if len(problems) > 0 {
		return usage, &InvalidOutputError{Raw: content, Problems: problems}
	}
	return usage, nil
}

// repairPrompt asks the model to correct its previous reply.
func repairPrompt(problems []string) string {
	var b strings.Builder
	b.WriteString("Your previous reply was not valid JSON for the required schema. Problems found:\n")
	for _, p := range problems {
		b.WriteString("- ")
		b.WriteString(p)
		b.WriteString("\n")
	}
	b.WriteString("Reply again with only the corrected JSON object, matching the schema exactly, and nothing else.")
	return b.String()
}

// decodeInto validates content and, if it is valid, stores it into rv (a
// pointer to a struct). It returns the problems found.
func decodeInto(content, finish string, sch *compiledSchema, rv reflect.Value) []string {
	problems := sch.validate(content)
	if len(problems) == 0 {
		fresh := reflect.New(rv.Elem().Type())
		if err := json.Unmarshal([]byte(content), fresh.Interface()); err != nil {
			problems = []string{"reply does not fit the expected structure: " + err.Error()}
		} else {
			rv.Elem().Set(fresh.Elem())
			return nil
		}
	}
	if finish == string(openai.FinishReasonLength) {
		problems = append(problems, "the reply was cut off at the token limit (finish_reason=length)")
	}
	return problems
}

func (c *Client) schemaFor(t reflect.Type) (*compiledSchema, error) {
	if s, ok := c.schemas.Load(t); ok {
		return s.(*compiledSchema), nil
	}
	s, err := buildSchema(t)
	if err != nil {
		return nil, err
	}
	c.schemas.Store(t, s)
	return s, nil
}

// sanitizeName turns a Go type name into a valid schema name.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	name := b.String()
	name = cmp.Or(name, "output")
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}
