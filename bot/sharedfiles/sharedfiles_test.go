package sharedfiles_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/sharedfiles"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	user, other, channel = bottest.Requester, bottest.Stranger, bottest.Channel
	runID                = "run-sf1"
)

// attachEngine is bottest's Engine whose AttachFiles adds the files to the
// run, as the engine does, and remembers what it was given.
type attachEngine struct {
	*bottest.Engine
	mu       sync.Mutex
	attached []pipeline.File
}

func (e *attachEngine) AttachFiles(ctx context.Context, id string, files []pipeline.File) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	r.Files = append(r.Files, files...)
	e.attached = append(e.attached, files...)
	e.Put(r)
	return r, nil
}

func (e *attachEngine) files() []pipeline.File {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]pipeline.File(nil), e.attached...)
}

// fixture is the App with shared files plugged in as the assembly plugs
// them, and a run of step in Channel's thread.
type fixture struct {
	*bottest.Harness
	engine *attachEngine
	thread string
}

func newFixture(t *testing.T, step pipeline.Step) *fixture {
	t.Helper()
	f := &fixture{engine: &attachEngine{Engine: bottest.NewEngine()}}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		sf, err := sharedfiles.New(sharedfiles.Config{Engine: f.engine, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Files = sf
	})
	api := slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	_, ts, err := api.PostMessage(channel, slack.MsgOptionText("Heat pumps", false))
	if err != nil {
		t.Fatal(err)
	}
	f.thread = ts
	f.engine.Put(&pipeline.Run{ID: runID, Question: "How well do heat pumps work in cold climates?", RequestedBy: user, Status: pipeline.StatusRunning, Step: step,
		Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel, ThreadTS: ts}})
	if err := f.Memory.RememberRunOfThread(f.Ctx, channel, ts, runID, bot.MessageKeyTTL); err != nil {
		t.Fatal(err)
	}
	return f
}

// share shares a text file named name as who, with a mention, in the
// run's thread.
func (f *fixture) share(t *testing.T, who, name string) {
	t.Helper()
	id := f.Fake.UploadUserFile(who, name, "text/plain", "text", []byte("Heat pumps keep working at -20 °C in the field trial."))
	if err := f.Fake.PostUserMentionWithFiles(f.Ctx, who, channel, f.thread, "", id); err != nil {
		t.Fatal(err)
	}
}

// inThread waits for a message of the bot in the run's thread whose blocks
// or text contain every one of texts.
func (f *fixture) inThread(what string, texts ...string) {
	f.Wait(what, func() bool {
		for _, m := range f.Fake.Messages(channel) {
			s := string(m.Blocks) + m.Text
			if m.ThreadTS != f.thread || m.BotID == "" {
				continue
			}
			ok := true
			for _, t := range texts {
				ok = ok && strings.Contains(s, t)
			}
			if ok {
				return true
			}
		}
		return false
	})
}

// TestAFileSharedBeforeThePlanIsAdded: another person's file is refused
// (not downloaded, not added); the requester's is downloaded with the bot
// token, read, added to the run as theirs, and the thread says so.
func TestAFileSharedBeforeThePlanIsAdded(t *testing.T) {
	f := newFixture(t, pipeline.StepPlan)

	f.share(t, other, "theirs.txt")
	f.inThread("the refusal of another person's file", "theirs.txt", "only the person who started this research")
	if d := f.Fake.FileDownloads(); len(d) != 0 {
		t.Errorf("a refused file was downloaded: %+v", d)
	}

	f.share(t, user, "field-trial.txt")
	f.inThread("the files-added message", "Added to this research", "field-trial.txt")
	got := f.engine.files()
	if len(got) != 1 || got[0].Name != "field-trial.txt" || got[0].SharedBy != user || got[0].SharedIn != channel || !strings.Contains(got[0].Text, "-20 °C") {
		t.Errorf("files added %+v, want the requester's, read", got)
	}
	if d := f.Fake.FileDownloads(); len(d) != 1 || !d[0].Authorized {
		t.Errorf("downloads %+v, want one with the bot token", d)
	}
}

// TestAFileSharedAfterTheSearchIsRefused: once the run has searched, a
// file is refused with the reason and nothing is added.
func TestAFileSharedAfterTheSearchIsRefused(t *testing.T) {
	f := newFixture(t, pipeline.StepWrite)
	f.share(t, user, "late.txt")
	f.inThread("the refusal", "late.txt", "already searched")
	if got := f.engine.files(); len(got) != 0 {
		t.Errorf("a late file was added: %+v", got)
	}
}
