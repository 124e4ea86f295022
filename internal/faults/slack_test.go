//go:build faults

package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/clarify"
	"github.com/researchbot/researchbot/bot/decisions"
	"github.com/researchbot/researchbot/bot/followups"
	"github.com/researchbot/researchbot/bot/steering"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

const user, channel = "U0REQ0001", "C0RESEARCH"

// slackWorld is the fake Slack, a worker replica on Redis directly, and the
// replica the clicks reach (the bot) on Redis through px.
type slackWorld struct {
	*world
	fake   *slackfake.Server
	px     *proxy
	worker *app.App
	front  *app.App   // the replica the clicks reach, behind px
	rp     *redisProc // the one Redis server
}

func newSlackWorld(t *testing.T, env map[string]string) *slackWorld {
	t.Helper()
	return newSlackWorldBehind(t, env, false)
}

// newSlackWorldBehind is newSlackWorld; with workerBehindProxy the worker
// too reaches Redis through px (so a test can move both to another server).
func newSlackWorldBehind(t *testing.T, env map[string]string, workerBehindProxy bool) *slackWorld {
	t.Helper()
	rp := startRedis(t)
	w := &slackWorld{world: newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, env), px: newProxy(t, rp.Addr()), fake: slackfake.New(t), rp: rp}
	w.fake.AddChannel(channel, "research", true)
	w.fake.AddUser(user, "ada", "UTC")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	metrics := bot.NewMetrics()
	workerURL := w.redis
	if workerBehindProxy {
		workerURL = w.px.URL()
	}
	worker := w.slackReplica(ctx, workerURL, metrics)
	if err := worker.Engine.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	stop, err := worker.StartWorker([]string{"slack"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	w.worker = worker.App
	front := w.slackReplica(ctx, w.px.URL(), metrics)
	w.front = front.App
	budget := redisstore.NewRateLimiter(front.Conn.Client, "slack")
	sender := bot.NewSender(bot.SenderConfig{BotToken: w.fake.BotToken(), AppToken: w.fake.AppToken(), APIURL: w.fake.APIURL(), Metrics: metrics, Logger: w.logger()})
	kit := bot.Kit{Sender: sender, Metrics: metrics, Logger: w.logger()} // the App's, as the assembly hands them to its features
	answers, err := clarify.New(clarify.Config{Engine: front.Engine, Kit: kit})
	if err != nil {
		t.Fatal(err)
	}
	steer, err := steering.New(steering.Config{Engine: front.Engine, Budget: budget, Kit: kit})
	if err != nil {
		t.Fatal(err)
	}
	followUps, err := followups.New(followups.Config{Engine: front.Engine, Budget: budget, Kit: kit})
	if err != nil {
		t.Fatal(err)
	}
	buttons, err := decisions.New(decisions.Config{Engine: front.Engine, Kit: kit})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bot.New(bot.Config{AppToken: w.fake.AppToken(), BotToken: w.fake.BotToken(), APIURL: w.fake.APIURL(), Sender: sender, Engine: front.Engine, Clarify: answers, Steering: steer, FollowUps: followUps, Features: []bot.Registrar{buttons, followUps},
		Memory: redisstore.NewSlackMemory(front.Conn.Client), Budget: budget, Metrics: metrics, Logger: w.logger()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }() // owner: this test; stopped by cancel at cleanup
	t.Cleanup(func() {
		w.px.up()
		cancel()
		<-done
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := w.fake.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// slackReplica assembles a researchbot whose Slack runs are shown through
// the Slack presenter, on redisURL.
func (w *slackWorld) slackReplica(ctx context.Context, redisURL string, metrics *bot.Metrics) *replica {
	w.t.Helper()
	cfg := w.config(redisURL)
	a, err := app.New(ctx, cfg, app.Options{Observer: metrics, DefaultQueue: "slack", Logger: w.logger(), ShutdownTimeout: time.Second})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = a.Close() })
	pres, err := bot.NewPresenter(bot.PresenterConfig{BotToken: w.fake.BotToken(), APIURL: w.fake.APIURL(), Memory: redisstore.NewSlackMemory(a.Conn.Client), Metrics: metrics, MinInterval: 200 * time.Millisecond})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(pres.Close)
	a.AddPresenter(bot.OriginKind, pres)
	return &replica{App: a, stop: func() {}}
}

// planCheckpoint starts a guided run by /research and returns the message
// of its plan review.
func (w *slackWorld) planCheckpoint() slackfake.Message {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := w.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "--mode guided How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		w.t.Fatal(err)
	}
	var m slackfake.Message
	eventually(w.t, waitLimit, "the plan review", func() bool {
		for _, x := range w.fake.Messages(channel) {
			if !x.Ephemeral && strings.Contains(string(x.Blocks), `"`+blockkit.ActionApprove+`"`) {
				m = x
				return true
			}
		}
		return false
	})
	return m
}

// instanceOf is the checkpoint id an Approve button carries.
func instanceOf(t *testing.T, m slackfake.Message) string {
	t.Helper()
	b := string(m.Blocks)
	i := strings.Index(b, `"action_id":"`+blockkit.ActionApprove+`"`)
	if i < 0 {
		t.Fatalf("no Approve button in %s", b)
	}
	const key = `"value":"`
	j := strings.Index(b[i:], key)
	if j < 0 {
		t.Fatalf("no value on the Approve button: %s", b[i:])
	}
	rest := b[i+j+len(key):]
	return rest[:strings.IndexByte(rest, '"')]
}

// decided reports whether the checkpoint's decision is in the store.
func (w *slackWorld) decided(instID string) bool {
	w.t.Helper()
	runID, _, _ := strings.Cut(instID, ".")
	r, err := w.worker.Engine.Load(context.Background(), runID)
	if err != nil {
		w.t.Fatal(err)
	}
	inst := r.Instance(instID)
	return inst != nil && inst.Decision != nil
}

// told is what the bot told the clicker ephemerally since n messages.
func (w *slackWorld) told(after int) string {
	var out []string
	for _, m := range w.fake.Messages(channel)[after:] {
		if m.Ephemeral && m.ToUser == user {
			out = append(out, m.Text)
		}
	}
	return strings.Join(out, " | ")
}

// clickAndJudge clicks Approve and waits until the click is either recorded
// or answered; it returns the ack latency and what the clicker was told.
func (w *slackWorld) clickAndJudge(m slackfake.Message, inst string, wait time.Duration) (time.Duration, string) {
	w.t.Helper()
	before := len(w.fake.Messages(channel))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	ack, err := w.fake.ClickButton(ctx, user, channel, m.TS, blockkit.ActionApprove, "", "")
	cancel()
	if err != nil {
		w.t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for w.told(before) == "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return ack.Latency, w.told(before)
}

// judge checks that what the clicker was told is true of the store.
func judge(t *testing.T, told string, recorded bool) {
	t.Helper()
	switch {
	case strings.Contains(told, "may not have been recorded"):
	case (strings.Contains(told, "was not applied") || strings.Contains(strings.ToLower(told), "nothing was changed")) && recorded:
		t.Errorf("told %q, but the decision was recorded", told)
	case told == "" && !recorded:
		t.Errorf("told nothing, and the decision was not recorded")
	}
}

// TestRedisLatencyDuringClicks: every reply from Redis to the replica the
// click reaches takes 2 s more (a TCP latency toxic). Slack is still acked
// within 3 s, the decision is recorded, nobody is told otherwise, and the
// run goes on.
func TestRedisLatencyDuringClicks(t *testing.T) {
	const latency2s = 2 * time.Second
	w := newSlackWorld(t, map[string]string{"RUN_LEASE": "15s"})
	m := w.planCheckpoint()
	inst := instanceOf(t, m)
	w.px.add("slow", "latency", "downstream", map[string]any{"latency": latency2s.Milliseconds()})
	start := time.Now()
	latency, _ := w.clickAndJudge(m, inst, 0)
	eventually(t, waitLimit, "the decision", func() bool { return w.decided(inst) })
	recordedAfter := time.Since(start)
	w.px.remove("slow")
	told := w.told(0)
	judge(t, told, true)
	s := w.settings()
	t.Logf("2 s of Redis latency: told %q", told)
	within(t, "acked after", latency, ackedInTime, s)
	within(t, "the decision was recorded after", recordedAfter, bound[time.Duration]{
		"12 round trips × 2 s latency", func(settings) time.Duration { return 12 * latency2s },
	}, s)
}

// TestRedisOutageDuringClicks: Redis is out of reach of the replica the
// click reaches for 30 s (the proxy refuses and cuts connections). The
// click is acked within 3 s; what the clicker is told is true once Redis
// is back; a click after the outage is recorded and the run goes on.
func TestRedisOutageDuringClicks(t *testing.T) {
	const outage = 30 * time.Second
	w := newSlackWorld(t, nil)
	m := w.planCheckpoint()
	inst := instanceOf(t, m)
	w.px.down()
	cut := time.Now()
	latency, told := w.clickAndJudge(m, inst, outage-time.Second)
	answered := time.Since(cut)
	time.Sleep(time.Until(cut.Add(outage))) // the outage lasts its length: the fault, not a synchronisation
	w.px.up()
	recorded := w.decided(inst)
	judge(t, told, recorded)
	var again time.Duration
	if !recorded {
		// go-redis stops dialling once as many dials failed as its pool
		// holds, and lets one probe dial a second: for up to a second after
		// Redis is reachable, the replica's commands still fail (and a
		// click then is told "nothing was changed", which is true). The
		// click after the outage is made once the replica reaches Redis.
		up := time.Now()
		eventually(t, waitLimit, "the replica reaching Redis again", func() bool {
			return w.front.Conn.Client.Ping(context.Background()).Err() == nil
		})
		t.Logf("the replica reached Redis %s after the proxy let it in", time.Since(up).Round(time.Millisecond))
		back := time.Now()
		var told2 string
		_, told2 = w.clickAndJudge(m, inst, 0)
		eventually(t, waitLimit, "the decision after the outage", func() bool { return w.decided(inst) })
		again = time.Since(back)
		judge(t, told2, true)
	}
	s := w.settings()
	t.Logf("Redis out of reach for %s: told %q (recorded: %v)", outage, told, recorded)
	within(t, "acked after", latency, ackedInTime, s)
	within(t, "the clicker was told after", answered, refusedOutcome, s)
	within(t, "a click after the outage was recorded in", again, clickRecorded, s)
	runID, _, _ := strings.Cut(inst, ".")
	eventually(t, waitLimit, "the next checkpoint", func() bool {
		r, err := w.worker.Engine.Load(context.Background(), runID)
		return err == nil && r.Current() != nil && r.Current().DefinitionID != checkpoints.PlanReview
	})
}
