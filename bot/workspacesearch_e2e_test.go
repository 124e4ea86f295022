package bot_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/workspacesearch"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// The workspace of the workspace-search tests: ada (the asker) and dana;
// #infra is public; #security is private, with ada and dana in it. Both
// channels hold a message the scripted research plan's queries find.
const (
	wsAsker     = "U0REQ0001"
	wsDana      = "U0DANA001"
	wsChannel   = "C0RESEARCH"
	wsPublic    = "Decision: the office heat pump replaces the boilers; installation cost was 12,000 EUR."
	wsPrivate   = "Confidential: the heat pump vendor contract has a penalty clause on installation cost."
	wsPrivateID = "C0SECURITY"
	wsFile      = "Quote: heat pump installation cost 11,800 EUR, valid until April."
)

var wsMarch2 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// workspaceStack is the real engine and bot on the fake Slack, with
// workspace search on and a web that finds nothing: every source comes from
// the workspace. Prompts records what the model was sent.
type workspaceStack struct {
	fake          *slackfake.Server
	ctx           context.Context
	pub, priv     string // permalinks
	file          string
	mu            sync.Mutex
	prompts       []string
	engine        *pipeline.Engine
	reportsBefore int
}

func startWorkspaceStack(t *testing.T) *workspaceStack {
	t.Helper()
	if testing.Short() {
		t.Skip("whole research runs")
	}
	s := &workspaceStack{}
	res := &researchtest.Researcher{Seen: func(c llmtest.Call) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.prompts = append(s.prompts, c.System+"\n"+c.User)
	}}
	srv, _ := redistest.Start(t)
	model := llmtest.NewServer(t, res.Respond)
	cfg := engineConfig(t, srv.URL, model.URL(), researchtest.NewWeb(t).URL())
	s.fake = slackfake.New(t)
	s.fake.AddChannel(wsChannel, "research", true)
	s.fake.AddChannel("C0INFRA", "infra", false)
	s.fake.AddUser(wsAsker, "ada", "UTC")
	s.fake.AddUser(wsDana, "dana", "UTC")
	s.fake.AddPrivateConversation(wsPrivateID, "security", "private_channel", wsAsker, wsDana)
	s.fake.EnableSearch(time.Minute)
	s.pub = s.fake.AddSearchableMessage("C0INFRA", wsDana, wsPublic, wsMarch2)
	s.priv = s.fake.AddSearchableMessage(wsPrivateID, wsDana, wsPrivate, wsMarch2)
	s.file = s.fake.AddSearchableFile("C0INFRA", wsDana, "Heat pump quote", wsFile, wsMarch2)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.ctx = ctx
	metrics := bot.NewMetrics()
	a0, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a0.Close() })
	pres, err := bot.NewPresenter(bot.PresenterConfig{BotToken: s.fake.BotToken(), APIURL: s.fake.APIURL(), Memory: redisstore.NewSlackMemory(a0.Conn.Client), Metrics: metrics, MinInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pres.Close)
	a, err := app.New(ctx, cfg, app.Options{
		Presenters: map[string]pipeline.Presenter{bot.OriginKind: pres}, Observer: metrics, DefaultQueue: "slack",
		Searchers: workspacesearch.Configured(true, s.fake.BotToken(), s.fake.APIURL(), nil, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	s.engine = a.Engine
	stopWorker, err := a.StartWorker([]string{"slack"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopWorker)
	bc := bot.Config{
		AppToken: s.fake.AppToken(), BotToken: s.fake.BotToken(), APIURL: s.fake.APIURL(), Engine: a.Engine,
		Memory: redisstore.NewSlackMemory(a.Conn.Client), Budget: redisstore.NewRateLimiter(a.Conn.Client, "slack"),
		Metrics: metrics, Start: bot.StartConfig{WorkspaceSearch: true},
	}
	plugConversation(t, &bc, a.Engine, bot.Limit{}, bot.Limit{})
	plugAssistant(t, &bc)
	plugDecisions(t, &bc, a.Engine)
	runBot(t, ctx, cancel, s.fake, bc)
	return s
}

// report waits for the next Markdown report file and returns it.
func (s *workspaceStack) report(t *testing.T) slackfake.File {
	t.Helper()
	if !bot.WaitUntil(s.fake, 60*time.Second, func() bool {
		fs := s.fake.Files()
		return len(fs) > s.reportsBefore && fs[s.reportsBefore].Completed
	}) {
		t.Fatalf("no report file; channel messages:\n%s", dumpAll(s.fake, wsChannel))
	}
	f := s.fake.Files()[s.reportsBefore]
	s.reportsBefore++
	return f
}

// sent reports whether any prompt the model was sent contains text.
func (s *workspaceStack) sent(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prompts {
		if strings.Contains(p, text) {
			return true
		}
	}
	return false
}

// shown reports whether any message or file in Slack shows text.
func (s *workspaceStack) shown(channel, text string) bool {
	for _, m := range s.fake.Messages(channel) {
		if strings.Contains(string(m.Blocks)+m.Text, text) {
			return true
		}
	}
	for _, f := range s.fake.Files() {
		if strings.Contains(string(f.Content), text) {
			return true
		}
	}
	return false
}

// withheldLine counts the #security message and the file (Slack does not
// say where a file was shared, so it is the asker's alone).
const withheldLine = "2 sources withheld: only people in a private conversation could read them"

// TestE2EWorkspaceSearchInAChannel: "@researchbot <question>" in a public
// channel searches the workspace with the mention's action token. The
// report cites the #infra message by its permalink ("[1] #infra — @dana,
// 2026-03-02"); the #security message ada can read, and a file (Slack does
// not say where it was shared), are withheld — never sent to the model,
// never shown — and the report counts them. A follow-up in the
// report's thread asking about it gets nothing of it either.
func TestE2EWorkspaceSearchInAChannel(t *testing.T) {
	s := startWorkspaceStack(t)
	if err := s.fake.PostUserMention(s.ctx, wsAsker, wsChannel, "", "--mode auto What did we decide about the office heat pump installation cost?"); err != nil {
		t.Fatal(err)
	}
	f := s.report(t)
	md := string(f.Content)
	if want := "[1] #infra — @dana, 2026-03-02 <" + s.pub + ">"; !strings.Contains(md, want) {
		t.Errorf("the report does not cite %q:\n%s", want, md)
	}
	if !strings.Contains(md, withheldLine) {
		t.Errorf("the report does not say %q:\n%s", withheldLine, md)
	}
	var summary slackfake.Message
	for _, m := range s.fake.Messages(wsChannel) {
		if strings.Contains(displayed(m), "full report is attached") {
			summary = m
		}
	}
	if !strings.Contains(string(summary.Blocks), s.pub) || !strings.Contains(displayed(summary), "#infra — @dana") {
		t.Errorf("the report message does not link the #infra message:\n%s", summary.Blocks)
	}
	if !strings.Contains(displayed(summary), withheldLine) {
		t.Errorf("the report message does not say %q:\n%s", withheldLine, displayed(summary))
	}
	if searches := s.fake.Calls("assistant.search.context"); len(searches) == 0 || searches[0].Params["action_token"] == "" {
		t.Fatalf("workspace searches %+v, want them made with the mention's action token", searches)
	}

	// A follow-up in the report's thread about what was withheld.
	if err := s.fake.PostUserMention(s.ctx, wsAsker, wsChannel, summary.ThreadTS, "What does the vendor contract say about a penalty clause?"); err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(s.fake, 30*time.Second, func() bool {
		for _, m := range s.fake.Thread(wsChannel, summary.ThreadTS) {
			if strings.Contains(displayed(m), "only this report's sources were used") {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no follow-up answer:\n%s", dumpAll(s.fake, wsChannel))
	}
	for _, secret := range []string{wsPrivate, "penalty clause on installation", s.priv, wsFile, s.file} {
		if s.sent(secret) {
			t.Errorf("a prompt carried the withheld %q", secret)
		}
		if s.shown(wsChannel, secret) {
			t.Errorf("Slack shows the withheld %q", secret)
		}
	}
}

// TestE2EWorkspaceSearchInTheAssistantThread: the same question asked in
// ada's assistant thread is read by her alone: the #security message and
// the file she can read are used and cited, nothing is withheld.
func TestE2EWorkspaceSearchInTheAssistantThread(t *testing.T) {
	s := startWorkspaceStack(t)
	dm := slackfake.DMChannelID(wsAsker)
	thread, err := s.fake.StartAssistantThread(s.ctx, wsAsker, wsChannel)
	if err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(s.fake, 10*time.Second, func() bool {
		for _, m := range s.fake.Thread(dm, thread) {
			if strings.Contains(displayed(m), "I research questions") {
				return true
			}
		}
		return false
	}) {
		t.Fatal("no greeting in the assistant thread")
	}
	if err := s.fake.PostUserMessage(s.ctx, wsAsker, dm, thread, "--mode auto What did we decide about the office heat pump installation cost?"); err != nil {
		t.Fatal(err)
	}
	md := string(s.report(t).Content)
	if want := "#security — @dana, 2026-03-02 <" + s.priv + ">"; !strings.Contains(md, want) {
		t.Errorf("the report does not cite %q:\n%s", want, md)
	}
	if strings.Contains(md, "withheld") {
		t.Errorf("the asker's own report withheld a source she can read:\n%s", md)
	}
	if !s.sent(wsPrivate) || !s.sent(wsFile) {
		t.Error("the #security message or the file never reached the model")
	}
	if want := "Heat pump quote — @dana, 2026-03-02 <" + s.file + ">"; !strings.Contains(md, want) {
		t.Errorf("the report does not cite %q:\n%s", want, md)
	}
}

// TestE2EWorkspaceSearchNeedsThePersonsToken: /research carries no action
// token, so the workspace is not searched and the report says so.
func TestE2EWorkspaceSearchNeedsThePersonsToken(t *testing.T) {
	s := startWorkspaceStack(t)
	if _, err := s.fake.SlashCommand(s.ctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto What did we decide about the office heat pump installation cost?", UserID: wsAsker, ChannelID: wsChannel}); err != nil {
		t.Fatal(err)
	}
	md := string(s.report(t).Content)
	if !strings.Contains(md, "- "+workspacesearch.NoToken+"\n") {
		t.Errorf("the report does not say %q:\n%s", workspacesearch.NoToken, md)
	}
	if n := len(s.fake.Calls("assistant.search.context")); n != 0 {
		t.Errorf("%d workspace searches without a token", n)
	}
	if s.sent(wsPublic) {
		t.Error("a workspace message reached the model without the person's permission")
	}
}
