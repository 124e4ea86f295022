package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatalf("Load with no variables: %v", err)
	}
	if c.OpenAIBaseURL != "https://api.openai.com/v1" || c.SlackAPIURL != "https://slack.com/api/" {
		t.Errorf("default URLs: %q %q", c.OpenAIBaseURL, c.SlackAPIURL)
	}
	if c.RedisURL != "" || c.AllowPrivate {
		t.Errorf("REDIS_URL default %q, AllowPrivate %v", c.RedisURL, c.AllowPrivate)
	}
	if c.MaxIterations != 3 || c.MaxGapRounds != 2 || c.MaxWall != 30*time.Minute || c.MaxCostUSD != 2 {
		t.Errorf("run limits: %+v", c)
	}
	if c.ModelFor("writer") != "gpt-4o-mini" {
		t.Errorf("ModelFor(writer) = %q", c.ModelFor("writer"))
	}
	if err := c.CheckLLM(); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("CheckLLM without key = %v", err)
	}
}

func TestEveryProblemIsReportedAtOnce(t *testing.T) {
	_, err := Load(env(map[string]string{
		"REDIS_URL":                    "localhost:6379",
		"OPENAI_BASE_URL":              "ftp://x",
		"RUN_MAX_ITERATIONS":           "zero",
		"LLM_TIMEOUT":                  "soon",
		"FETCH_ALLOW_PRIVATE_NETWORKS": "maybe",
		"LLM_PRICES":                   "gpt-4o=2.5",
		"SLACK_APPROVERS":              "=U1",
		"LOG_LEVEL":                    "loud",
	}))
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"REDIS_URL", "OPENAI_BASE_URL", "RUN_MAX_ITERATIONS", "LLM_TIMEOUT", "FETCH_ALLOW_PRIVATE_NETWORKS", "LLM_PRICES", "SLACK_APPROVERS", "LOG_LEVEL"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

func TestParsesStructuredValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		"SLACK_APPROVERS":          "C1=U1, U2;C2=U3",
		"LLM_PRICES":               "my-model=1.5/6, other=0/0",
		"LLM_MODEL":                "base",
		"LLM_MODEL_REVIEWER":       "strong",
		"OPENAI_BASE_URL":          "http://localhost:11434/v1",
		"REDIS_URL":                "redis://127.0.0.1:6379/2",
		"RUN_MAX_SOURCES":          "7",
		"RUN_MAX_WALL":             "0",
		"FETCH_CACHE_TTL":          "1h",
		"FETCH_MAX_BYTES":          "2048",
		"WORKER_CONCURRENCY":       "3",
		"RATE_LIMIT_USER_PER_HOUR": "4",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Approvers["C1"]; len(got) != 2 || got[1] != "U2" || c.Approvers["C2"][0] != "U3" {
		t.Errorf("approvers %v", c.Approvers)
	}
	if c.Prices["my-model"] != (Price{In: 1.5, Out: 6}) {
		t.Errorf("prices %v", c.Prices)
	}
	if c.ModelFor("reviewer") != "strong" || c.ModelFor("planner") != "base" {
		t.Errorf("role models %v", c.RoleModels)
	}
	if err := c.CheckLLM(); err != nil {
		t.Errorf("a local endpoint needs no key: %v", err)
	}
	if c.MaxSources != 7 || c.MaxWall != 0 || c.FetchMaxBytes != 2048 || c.WorkerConcurrency != 3 || c.UserRunsPerHour != 4 {
		t.Errorf("numbers %+v", c)
	}
}

func TestSlackTokensAreChecked(t *testing.T) {
	c, _ := Load(env(map[string]string{"SLACK_APP_TOKEN": "xoxb-wrong"}))
	err := c.CheckSlack()
	if err == nil || !strings.Contains(err.Error(), "xapp-") || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN is not set") {
		t.Fatalf("CheckSlack = %v", err)
	}
	c, _ = Load(env(map[string]string{"SLACK_APP_TOKEN": "xapp-1", "SLACK_BOT_TOKEN": "xoxb-1"}))
	if err := c.CheckSlack(); err != nil {
		t.Fatal(err)
	}
}

func TestSecretsNeverAppearInErrors(t *testing.T) {
	_, err := Load(env(map[string]string{"REDIS_URL": "redis//:hunter2@host"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error leaks the secret or is missing: %v", err)
	}
}

func TestStyleGuideAndTargetLength(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "style.md")
	if err := os.WriteFile(path, []byte("  Plain English; short sentences.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ value, want string }{
		{"Write for council officers.", "Write for council officers."},
		{path, "Plain English; short sentences."},
		{"Executive", stylePresets["executive"]},
		{"", ""},
	} {
		cfg, err := Load(env(map[string]string{"RUN_STYLE_GUIDE": c.value, "RUN_TARGET_LENGTH": "1200", "RUN_MAX_SEARCH_ERRORS": "5"}))
		if err != nil {
			t.Fatalf("RUN_STYLE_GUIDE=%q: %v", c.value, err)
		}
		if cfg.StyleGuide != c.want || cfg.TargetLength != 1200 || cfg.MaxSearchErrors != 5 {
			t.Errorf("RUN_STYLE_GUIDE=%q: guide %q, length %d, search errors %d", c.value, cfg.StyleGuide, cfg.TargetLength, cfg.MaxSearchErrors)
		}
	}
	_, err := Load(env(map[string]string{
		"RUN_STYLE_GUIDE":       filepath.Join(dir, "missing.md"),
		"RUN_TARGET_LENGTH":     "12",
		"RUN_MAX_SEARCH_ERRORS": "0",
	}))
	for _, want := range []string{"RUN_STYLE_GUIDE: cannot read the style guide file", "RUN_TARGET_LENGTH: want a number of words from 100 to 20000", "RUN_MAX_SEARCH_ERRORS"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if c, _ := Load(env(nil)); c.MaxSearchErrors != 3 || c.TargetLength != 0 || c.StyleGuide != "" {
		t.Errorf("defaults: search errors %d, length %d, guide %q", c.MaxSearchErrors, c.TargetLength, c.StyleGuide)
	}
}

func TestSlackAdmins(t *testing.T) {
	c, err := Load(env(map[string]string{"SLACK_ADMINS": " U01ABC, W02XYZ ,"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Admins) != 2 || c.Admins[0] != "U01ABC" || c.Admins[1] != "W02XYZ" {
		t.Errorf("admins %v", c.Admins)
	}
	if _, err := Load(env(map[string]string{"SLACK_ADMINS": "U1,@ada"})); err == nil || !strings.Contains(err.Error(), `SLACK_ADMINS`) || !strings.Contains(err.Error(), `"@ada"`) {
		t.Errorf("a bad admin id: %v", err)
	}
}

func TestReviewSourcesChannels(t *testing.T) {
	c, err := Load(env(map[string]string{"SLACK_REVIEW_SOURCES": "C01ABC, G02XYZ"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ReviewSources) != 2 || c.ReviewSources[1] != "G02XYZ" {
		t.Errorf("channels %v", c.ReviewSources)
	}
	if _, err := Load(env(map[string]string{"SLACK_REVIEW_SOURCES": "#general"})); err == nil || !strings.Contains(err.Error(), "SLACK_REVIEW_SOURCES") {
		t.Errorf("a channel name instead of an id: %v", err)
	}
}

// TestStreamedPlanSettings: the streamed plan's settings are read, with
// their defaults (issue 21).
func TestStreamedPlanSettings(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.StreamInChannels || c.ProgressInterval != 3*time.Second {
		t.Errorf("defaults: stream in channels %v, interval %s", c.StreamInChannels, c.ProgressInterval)
	}
	c, err = Load(env(map[string]string{"SLACK_STREAM_IN_CHANNELS": "true", "SLACK_PROGRESS_INTERVAL": "5s"}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.StreamInChannels || c.ProgressInterval != 5*time.Second {
		t.Errorf("set: stream in channels %v, interval %s", c.StreamInChannels, c.ProgressInterval)
	}
	if _, err := Load(env(map[string]string{"SLACK_PROGRESS_INTERVAL": "0s"})); err == nil {
		t.Error("a zero progress interval was accepted")
	}
}
