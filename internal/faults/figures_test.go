//go:build faults

package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// settings are the configuration values the suite's bounds are derived
// from: the ones a test ran with, and the defaults (for the figure a
// deployment that changed nothing would see).
type settings struct {
	lease      time.Duration // RUN_LEASE
	llmTimeout time.Duration // LLM_TIMEOUT
	llmRetries int           // LLM_MAX_RETRIES
	stepWait   time.Duration // LLM_STEP_WAIT
	claimTTL   time.Duration // a scheduled fire's claim (scheduler.ServiceConfig.ClaimTTL)
	// stepRetries is the waits between a step's attempts, added up: the
	// queue's retry delays (pipeline.StepRetryDelay, 2 s then 4 s; the
	// suite's replicas wait 100 ms).
	stepRetries time.Duration
	// downAfter and failoverTimeout are the sentinels' settings
	// (down-after-milliseconds, failover-timeout) of a Sentinel REDIS_URL.
	downAfter, failoverTimeout time.Duration
}

// defaults are the settings of a deployment that sets nothing.
var defaults = func() settings {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-test"}[k]
	})
	if err != nil {
		panic(fmt.Sprintf("the default configuration does not load: %v", err))
	}
	s := settingsOf(cfg)
	s.downAfter, s.failoverTimeout = 30*time.Second, 3*time.Minute // Redis Sentinel's own defaults
	return s
}()

// settingsOf picks the settings bounds are derived from out of cfg.
func settingsOf(cfg config.Config) settings {
	return settings{lease: cfg.LeaseTTL, llmTimeout: cfg.LLMTimeout, llmRetries: cfg.LLMMaxRetries,
		stepWait: cfg.LLMStepWait, claimTTL: scheduler.DefaultClaimTTL,
		stepRetries: pipeline.StepRetryDelay(1) + pipeline.StepRetryDelay(2)}
}

// settings are the settings of the world's replicas.
func (w *world) settings() settings {
	s := settingsOf(w.config(w.redis))
	s.stepRetries = (pipeline.MaxStepAttempts - 1) * suiteRetryDelay
	return s
}

// The pieces bounds are built from. They are upper bounds derived from the
// mechanism, with room for a loaded 2-core machine running -race; never a
// measurement with a little added.
const (
	// stepsWork bounds the work of the steps between two points of a run
	// (search, read, analyse, draft with the fake model and web), which
	// takes well under a second on an idle machine.
	stepsWork = 5 * time.Second
	// suiteRetryDelay is the wait before a step's next attempt in the
	// suite's replicas (app.Options.RetryDelay).
	suiteRetryDelay = 100 * time.Millisecond
	// llmBackoff bounds one wait of the model client between retries: 1 s
	// initial interval with ±50 % jitter (llm's exponential back-off).
	llmBackoff = 1500 * time.Millisecond
	// redisBackoff is go-redis's longest wait between a command's tries
	// (MaxRetryBackoff in redisstore's tuning).
	redisBackoff = 500 * time.Millisecond
	// redisTries is how often go-redis tries a command (1 + MaxRetries).
	redisTries = 3
	// slackAck is Slack's limit for acknowledging an interaction.
	slackAck = 3 * time.Second
)

// redisCommand bounds one Redis command that gets no answer: every try
// waits its read timeout (derived from RUN_LEASE), then the back-off.
func redisCommand(s settings) time.Duration {
	_, rw := redisstore.Timeouts(s.lease)
	return redisTries * (rw + redisBackoff)
}

// redisDial bounds one Redis command whose server refuses or drops the
// connection: every try waits at most its dial timeout, then the back-off.
func redisDial(s settings) time.Duration {
	dial, _ := redisstore.Timeouts(s.lease)
	return redisTries * (dial + redisBackoff)
}

// bound is the most a figure may be, as a rule over the settings.
type bound[T int | time.Duration] struct {
	// rule is how the bound follows from the settings, as printed:
	// "2×RUN_LEASE".
	rule string
	// at is the bound for settings.
	at func(settings) T
}

// The bounds the suite's figures are held to.
var (
	// takeover: a dead or cut-off holder's lease runs out within a lease
	// of its last refresh and a rescue pass (every half lease) or a
	// worker's pick-up finds the run.
	takeover = bound[time.Duration]{"2×RUN_LEASE", func(s settings) time.Duration { return 2 * s.lease }}
	// holderStops: a holder that cannot refresh cancels its step 2/3 of a
	// lease after its last good refresh, before the lease could be taken.
	holderStops = bound[time.Duration]{"RUN_LEASE", func(s settings) time.Duration { return s.lease }}
	// takeoverAndSteps: taken over (or resumed by its own worker) and the
	// steps up to the next point.
	takeoverAndSteps = bound[time.Duration]{"2×RUN_LEASE + 5 s of steps",
		func(s settings) time.Duration { return 2*s.lease + stepsWork }}
	// clickRecorded: a decision on a Redis that answers: its commands, the
	// first of which may meet a connection the restart closed (one more try).
	clickRecorded = bound[time.Duration]{"3 tries × (Redis read timeout + 0.5 s)", redisCommand}
	// unknownOutcome: a save whose reply never comes, then the re-read
	// that would tell whether it committed, each failing after its tries,
	// and the pause between them; one more command's worth of room.
	unknownOutcome = bound[time.Duration]{"3 commands × 3 tries × (Redis read timeout + 0.5 s)",
		func(s settings) time.Duration { return 3 * redisCommand(s) }}
	// refusedOutcome: the same when Redis refuses connections: each try
	// fails within its dial timeout.
	refusedOutcome = bound[time.Duration]{"3 commands × 3 tries × (Redis dial timeout + 0.5 s)",
		func(s settings) time.Duration { return 3 * redisDial(s) }}
	// ackedInTime: Socket Mode acknowledges before any Redis work.
	ackedInTime = bound[time.Duration]{"Slack's 3 s", func(settings) time.Duration { return slackAck }}
	// oneCallInFlight: a lease has one holder, so a step has one call out.
	oneCallInFlight = bound[int]{"1 (one lease holder)", func(settings) int { return 1 }}
	// stepCalls: every step attempt makes 1 + LLM_MAX_RETRIES calls.
	stepCalls = bound[int]{"3 step attempts × (1 + LLM_MAX_RETRIES)",
		func(s settings) int { return pipeline.MaxStepAttempts * (1 + s.llmRetries) }}
	// nothingTwice: a decision, a plan, a report happen once.
	nothingTwice = bound[int]{"1", func(settings) int { return 1 }}
	// none: what must not happen at all.
	none = bound[int]{"0", func(settings) int { return 0 }}
)

// within prints a figure beside its bound and the settings it was measured
// with, and fails the test when the figure is over the bound: the suite's
// one rule for a FIGURE line, e.g.
//
//	FIGURE TestLeaseLostMidStep: taken over after 2.15 s (bound 2×RUN_LEASE = 4 s with RUN_LEASE=2s; 30 s with the defaults)
func within[T int | time.Duration](t testing.TB, what string, got T, b bound[T], s settings) {
	t.Helper()
	limit, dflt := b.at(s), b.at(defaults)
	line := fmt.Sprintf("FIGURE %s: %s %s (bound %s", t.Name(), what, show(got), b.rule)
	if !strings.HasPrefix(b.rule, show(limit)) { // "1 (one lease holder)" needs no "= 1"
		line += " = " + show(limit)
	}
	if used := s.named(b.rule); used != "" {
		line += " with " + used
	}
	if dflt != limit {
		line += "; " + show(dflt) + " with the defaults"
	}
	line += ")"
	t.Log(line)
	if got > limit {
		t.Errorf("over its bound: %s", line)
	}
}

// show prints a duration in seconds ("2.26 s", "13 ms") and a count as is.
func show[T int | time.Duration](v T) string {
	switch x := any(v).(type) {
	case time.Duration:
		switch {
		case x < time.Second:
			return fmt.Sprintf("%d ms", x.Milliseconds())
		case x >= 2*time.Minute:
			return x.Round(time.Second).String()
		case x%time.Second == 0:
			return fmt.Sprintf("%d s", x/time.Second)
		default:
			return fmt.Sprintf("%.2f s", x.Seconds())
		}
	default:
		return fmt.Sprint(v)
	}
}

// String names every setting bounds are derived from.
func (s settings) String() string {
	return s.named("RUN_LEASE LLM_TIMEOUT LLM_MAX_RETRIES LLM_STEP_WAIT ClaimTTL")
}

// named names the settings rule mentions, with their values in s:
// "RUN_LEASE=2s LLM_TIMEOUT=1s". The Redis timeouts follow from RUN_LEASE.
func (s settings) named(rule string) string {
	var out []string
	for _, x := range []struct {
		name  string
		value any
	}{{"RUN_LEASE", s.lease}, {"LLM_TIMEOUT", s.llmTimeout}, {"LLM_MAX_RETRIES", s.llmRetries},
		{"LLM_STEP_WAIT", s.stepWait}, {"ClaimTTL", s.claimTTL}, {"step retry delays", s.stepRetries},
		{"down-after-milliseconds", s.downAfter}, {"failover-timeout", s.failoverTimeout}} {
		if strings.Contains(rule, x.name) || x.name == "RUN_LEASE" && strings.Contains(rule, "Redis read") || x.name == "RUN_LEASE" && strings.Contains(rule, "Redis dial") {
			out = append(out, fmt.Sprintf("%s=%v", x.name, x.value))
		}
	}
	return strings.Join(out, " ")
}

// failures is a testing.TB that records what would fail the test.
type failures struct {
	testing.TB
	errs []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// TestAFigureOverItsBoundFails: within fails a figure over its bound and
// passes one under it, and the defaults are the documented ones.
func TestAFigureOverItsBoundFails(t *testing.T) {
	s := defaults
	s.lease = 2 * time.Second
	over := &failures{TB: t}
	within(over, "taken over after", 4100*time.Millisecond, takeover, s)
	if len(over.errs) != 1 || !strings.Contains(over.errs[0], "4.10 s (bound 2×RUN_LEASE = 4 s with RUN_LEASE=2s; 30 s with the defaults)") {
		t.Errorf("4.1 s against 2×2 s: %q", over.errs)
	}
	under := &failures{TB: t}
	within(under, "taken over after", 3900*time.Millisecond, takeover, s)
	within(under, "calls", 6, stepCalls, settings{llmRetries: 1})
	if len(under.errs) != 0 {
		t.Errorf("under the bound: %q", under.errs)
	}
	if defaults.lease != 15*time.Second || defaults.llmTimeout != 2*time.Minute || defaults.llmRetries != 4 {
		t.Errorf("defaults %s", defaults)
	}
}
