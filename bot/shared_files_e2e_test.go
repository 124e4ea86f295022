package bot_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// modulePDF returns the bytes of a real PDF no one here wrote: the n-th
// of github.com/dslipak/pdf's test data in the module cache (one story
// saved by ten tools), skipping the test when there is none.
func modulePDF(t *testing.T, n int) []byte {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no module cache: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "github.com/dslipak/pdf@v0.0.2/testdata/story_*.pdf"))
	if len(files) <= n {
		t.Skip("no PDFs of github.com/dslipak/pdf in the module cache (go mod download fetches them)")
	}
	b, err := os.ReadFile(files[n])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fileCDN is another host Slack's downloads may be redirected to: it
// serves the file and records the Authorization headers it receives.
type fileCDN struct {
	mu      sync.Mutex
	headers []string
}

func newFileCDN(t *testing.T, body []byte) (*fileCDN, string) {
	c := &fileCDN{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.headers = append(c.headers, r.Header.Get("Authorization"))
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func (c *fileCDN) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.headers...)
}

// filesStack is the real engine and bot with shared files read.
func filesStack(t *testing.T) (*slackfake.Server, *app.App, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("a whole research run")
	}
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, a *app.App) {
		plugSharedFiles(t, c, a.Engine)
		plugStart(t, c) // the start form's file_input
	})
	return fake, a, ctx
}

// reportFile is the report the bot uploaded to channel, if any.
func reportFile(fake *slackfake.Server, channel string) (slackfake.File, bool) {
	for _, f := range fake.Files() {
		if f.User == "" && f.Completed && f.Channel == channel && strings.HasPrefix(f.Name, "research-") && strings.HasSuffix(f.Name, ".md") {
			return f, true
		}
	}
	return slackfake.File{}, false
}

// approveUntilReport approves every checkpoint posted in channel until the
// report's file is uploaded, and returns the report's summary and file.
func approveUntilReport(t *testing.T, ctx context.Context, fake *slackfake.Server, user, channel string) (string, slackfake.File) {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var m slackfake.Message
		next := func() bool {
			var ok bool
			m, _, ok = pendingCheckpoint(fake, channel)
			_, done := reportFile(fake, channel)
			return done || (ok && !seen[m.TS])
		}
		if !bot.WaitUntil(fake, time.Until(deadline), next) {
			t.Fatalf("no report; messages:\n%s", dumpAll(fake, channel))
		}
		if _, done := reportFile(fake, channel); done {
			break
		}
		seen[m.TS] = true
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := fake.ClickButton(cctx, user, channel, m.TS, blockkit.ActionApprove, "", "")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	var summary string
	bot.WaitUntil(fake, 10*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if s := displayed(m); strings.Contains(s, "full report is attached") {
				summary = s
			}
		}
		return summary != ""
	})
	f, _ := reportFile(fake, channel)
	return summary, f
}

// runAsking waits for the run of user asking question.
func runAsking(t *testing.T, ctx context.Context, fake *slackfake.Server, a *app.App, user, question string) *pipeline.Run {
	t.Helper()
	var found *pipeline.Run
	if !bot.WaitUntil(fake, 20*time.Second, func() bool {
		runs, _ := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 20})
		for _, r := range runs {
			if r.Question == question && !r.Held { // held: its root message is being posted
				found = r
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no run of %q", question)
	}
	return found
}

// TestE2EAPDFSharedInTheThreadBeforeThePlanIsReadAndCited: while a guided
// run waits for its plan, the requester shares a real PDF in its thread
// with a mention. The bot downloads it with its token from Slack, which
// redirects the download to another host: that host gets the file request
// without the token. The thread is told the file is added; the report
// cites it by name as shared by the requester, in the Slack summary and
// in the Markdown file.
func TestE2EAPDFSharedInTheThreadBeforeThePlanIsReadAndCited(t *testing.T) {
	fake, a, ctx := filesStack(t)
	const user, channel = "U0REQ0001", "C0RESEARCH"
	const q = "How well do heat pumps work in cold climates?"
	wctx, wcancel := context.WithTimeout(ctx, 120*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: q, UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(fake, 30*time.Second, func() bool { _, _, ok := pendingCheckpoint(fake, channel); return ok }) {
		t.Fatalf("no plan:\n%s", dumpAll(fake, channel))
	}
	r := runAsking(t, wctx, fake, a, user, q)
	pdf := modulePDF(t, 0)
	cdn, cdnURL := newFileCDN(t, pdf)
	fake.RedirectFileDownloads(cdnURL)
	// Someone who may not decide this run's checkpoints may not add files.
	const other = "U0OTHER01"
	fake.AddUser(other, "grace", "UTC")
	theirs := fake.UploadUserFile(other, "theirs.pdf", "application/pdf", "pdf", pdf)
	if err := fake.PostUserMentionWithFiles(wctx, other, channel, r.Origin.ThreadTS, "", theirs); err != nil {
		t.Fatal(err)
	}
	waitMessage(wctx, t, fake, channel, "the refusal of another person's file", func(m slackfake.Message) bool {
		s := displayed(m)
		return strings.Contains(s, "theirs.pdf") && strings.Contains(s, "only the person who started this research")
	})
	if d := fake.FileDownloads(); len(d) != 0 {
		t.Errorf("a refused file was downloaded: %+v", d)
	}

	id := fake.UploadUserFile(user, "field-trial.pdf", "application/pdf", "pdf", pdf)
	if err := fake.PostUserMentionWithFiles(wctx, user, channel, r.Origin.ThreadTS, "", id); err != nil {
		t.Fatal(err)
	}
	added := waitMessage(wctx, t, fake, channel, "the files-added message", func(m slackfake.Message) bool {
		return strings.Contains(displayed(m), "Added to this research")
	})
	if s := displayed(added); !strings.Contains(s, "*field-trial.pdf* (PDF, ") || !strings.Contains(s, "shared by <@"+user+">") || !strings.Contains(s, "1 file attached; it will be read first") {
		t.Errorf("the files-added message says:\n%s", s)
	}
	if d := fake.FileDownloads(); len(d) != 1 || !d[0].Authorized || d[0].FileID != id {
		t.Errorf("downloads from Slack %+v, want one with the bot token", d)
	}
	if got := cdn.seen(); len(got) != 1 || got[0] != "" {
		t.Errorf("the other host received Authorization headers %q, want one request without", got)
	}
	stored, err := a.Engine.Load(wctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.Files) != 1 || stored.Files[0].SharedBy != user || stored.Files[0].SharedIn != channel || stored.Files[0].SourceID == 0 {
		t.Fatalf("run files %+v, want the PDF shared by %s in %s, a source", stored.Files, user, channel)
	}

	summary, file := approveUntilReport(t, wctx, fake, user, channel)
	if !strings.Contains(summary, "field-trial.pdf") || !strings.Contains(summary, "shared by <@"+user+">") {
		t.Errorf("the report summary does not cite the file as shared by the requester:\n%s\n%s", summary, dumpAll(fake, channel))
	}
	if md := string(file.Content); !strings.Contains(md, "field-trial.pdf — shared by @"+user+", PDF, ") || strings.Contains(md, "theirs.pdf") {
		t.Errorf("the Markdown report does not cite the file as shared by the requester (and only it):\n%s", md)
	}

	// After the plan, a file would not be read first: it is refused, truthfully.
	late := fake.UploadUserFile(user, "late.pdf", "application/pdf", "pdf", pdf)
	if err := fake.PostUserMentionWithFiles(wctx, user, channel, r.Origin.ThreadTS, "", late); err != nil {
		t.Fatal(err)
	}
	waitMessage(wctx, t, fake, channel, "the refusal of a late file", func(m slackfake.Message) bool {
		s := displayed(m)
		return strings.Contains(s, "late.pdf") && strings.Contains(s, "already searched")
	})
	if stored, _ := a.Engine.Load(wctx, r.ID); stored == nil || len(stored.Files) != 1 {
		t.Errorf("the finished run's files changed: %+v", stored)
	}
}

// TestE2EAFileAttachedInTheStartFormIsRead: the start form offers a
// file_input; a real PDF attached there is read by the run and cited as
// shared by the person who started it, and a spreadsheet attached beside
// it is refused in the thread with the kinds that are read, while the
// research goes on without it.
func TestE2EAFileAttachedInTheStartFormIsRead(t *testing.T) {
	fake, a, ctx := filesStack(t)
	const user, channel = "U0REQ0001", "C0RESEARCH"
	const q = "What do field trials say about heat pumps in the cold?"
	wctx, wcancel := context.WithTimeout(ctx, 120*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(fake, 20*time.Second, func() bool { return len(fake.Views()) > 0 }) {
		t.Fatal("no start form")
	}
	v := fake.Views()[0]
	if !strings.Contains(string(v.JSON), `"type":"file_input"`) || !strings.Contains(string(v.JSON), `"filetypes":["pdf","docx","md","markdown","csv","txt","html","htm","xhtml"]`) {
		t.Errorf("the start form has no file_input for the kinds read:\n%s", v.JSON)
	}
	pdf := fake.UploadUserFile(user, "trial.pdf", "application/pdf", "pdf", modulePDF(t, 1))
	sheet := fake.UploadUserFile(user, "budget.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx", []byte("PK\x03\x04 a spreadsheet"))
	ack, err := fake.SubmitView(wctx, user, v.SlackView(), map[string]map[string]slack.BlockAction{
		"start_question": {"value": {Value: q}},
		"start_mode":     {"value": {SelectedOption: slack.OptionBlockObject{Value: "auto"}}},
		"start_files":    {"value": slackfake.FileInput(pdf, sheet)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if va, err := ack.ViewSubmission(); err != nil || va.ResponseAction == "errors" {
		t.Fatalf("the form was refused: %+v %v", va, err)
	}
	r := runAsking(t, wctx, fake, a, user, q)
	refused := waitMessage(wctx, t, fake, channel, "the refusal of the spreadsheet", func(m slackfake.Message) bool {
		return m.ThreadTS == r.Origin.ThreadTS && strings.Contains(displayed(m), "budget.xlsx")
	})
	if s := displayed(refused); !strings.Contains(s, "accepted: PDF") || !strings.Contains(s, "The research goes on without it.") {
		t.Errorf("the refusal says:\n%s", s)
	}
	summary, file := approveUntilReport(t, wctx, fake, user, channel)
	if !strings.Contains(summary, "trial.pdf") || !strings.Contains(summary, "shared by <@"+user+">") {
		t.Errorf("the report summary does not cite the form's file:\n%s", summary)
	}
	if md := string(file.Content); !strings.Contains(md, "trial.pdf — shared by @"+user) || strings.Contains(md, "budget.xlsx") {
		t.Errorf("the Markdown report cites:\n%s", md)
	}
}

// TestE2EAFileSharedInADirectMessageIsNotReadByAChannelRun: a file sent
// with a question in the bot's assistant thread (a direct message; Slack
// gives only its id, so the bot asks files.info) is read by that thread's
// run; a run in a channel, started by the same
// person, does not read it and its report does not name it.
func TestE2EAFileSharedInADirectMessageIsNotReadByAChannelRun(t *testing.T) {
	fake, a, ctx := filesStack(t)
	const user, channel = "U0REQ0001", "C0RESEARCH"
	dm := slackfake.DMChannelID(user)
	wctx, wcancel := context.WithTimeout(ctx, 120*time.Second)
	defer wcancel()
	thread, err := fake.StartAssistantThread(wctx, user, channel)
	if err != nil {
		t.Fatal(err)
	}
	const private = "What does our private memo say about heat pumps?"
	fake.ShareFilesByIDOnly(true) // the bot must ask files.info
	id := fake.UploadUserFile(user, "private-memo.pdf", "application/pdf", "pdf", modulePDF(t, 2))
	if err := fake.PostUserMessageWithFiles(wctx, user, dm, thread, private, id); err != nil {
		t.Fatal(err)
	}
	inDM := runAsking(t, wctx, fake, a, user, private)
	if len(inDM.Files) != 1 || inDM.Files[0].Name != "private-memo.pdf" || inDM.Files[0].SharedIn != dm || inDM.Origin.Channel != dm {
		t.Fatalf("the DM run's files %+v in %s, want the memo shared in %s", inDM.Files, inDM.Origin.Channel, dm)
	}
	if n := len(fake.Calls("files.info")); n != 1 {
		t.Errorf("files.info was called %d times, want once for the file Slack gave by id", n)
	}
	waitMessage(wctx, t, fake, dm, "the DM run's plan naming its file", func(m slackfake.Message) bool {
		return m.ThreadTS == thread && strings.Contains(displayed(m), "1 file attached; it will be read first")
	})

	const public = "How well do heat pumps work in cold climates?"
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto " + public, UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	summary, file := approveUntilReport(t, wctx, fake, user, channel)
	inChannel := runAsking(t, wctx, fake, a, user, public)
	if len(inChannel.Files) != 0 {
		t.Errorf("the channel run has files %+v", inChannel.Files)
	}
	for _, s := range []string{summary, string(file.Content)} {
		if strings.Contains(s, "private-memo") {
			t.Errorf("the channel report names the DM's file:\n%s", s)
		}
	}
	if d := fake.FileDownloads(); len(d) != 1 {
		t.Errorf("the DM's file was downloaded %d times, want once (for the DM's run)", len(d))
	}
}
