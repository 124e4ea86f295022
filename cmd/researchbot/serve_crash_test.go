package main

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// serveEnv is the environment of a `researchbot serve` child talking to the fake Slack.
func serveEnv(fake *slackfake.Server) []string {
	return []string{
		"SLACK_APP_TOKEN=" + fake.AppToken(), "SLACK_BOT_TOKEN=" + fake.BotToken(),
		"SLACK_API_URL=" + fake.APIURL(), "HTTP_ADDR=127.0.0.1:0", "LOG_LEVEL=warn",
	}
}

// buttonMessage waits for a message in the thread with a button of actionID
// whose text mentions want, and returns its ts.
func buttonMessage(t *testing.T, fake *slackfake.Server, channel, actionID, want string, after string) string {
	t.Helper()
	var ts string
	if !fake.WaitUntil(60*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if m.TS > after && strings.Contains(string(m.Blocks), `"`+actionID+`"`) && strings.Contains(string(m.Blocks), want) {
				ts = m.TS
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no message with %s mentioning %q", actionID, want)
	}
	return ts
}

func TestServeKilledWhileACheckpointWaitsAndTheOldButtonFinishesTheRun(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	fake := slackfake.New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ana", "Europe/Oslo")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	first := w.startWith(t, serveEnv(fake), "serve")
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	ack, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "--mode guided How well do heat pumps work in cold climates?", UserID: "U1", ChannelID: "C1"})
	if err != nil || ack.Latency > 3*time.Second {
		t.Fatalf("slash command ack: %v after %v", err, ack.Latency)
	}
	planTS := buttonMessage(t, fake, "C1", "cp_approve", "Research plan", "")
	first.kill(t) // kill -9 while the plan waits for a person

	w.startWith(t, serveEnv(fake), "serve")
	if err := fake.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// The button posted by the dead process still works.
	clicked := time.Now()
	if _, err := fake.ClickButton(ctx, "U1", "C1", planTS, "cp_approve", "", ""); err != nil {
		t.Fatal(err)
	}
	draftTS := buttonMessage(t, fake, "C1", "cp_approve", "Draft", planTS)
	t.Logf("kill -9 of serve while the plan waited: the old button, clicked on the restarted process, brought the draft review %v later",
		time.Since(clicked).Round(10*time.Millisecond))
	if _, err := fake.ClickButton(ctx, "U1", "C1", draftTS, "cp_approve", "", ""); err != nil {
		t.Fatal(err)
	}
	reportFile := func() (slackfake.File, bool) {
		for _, f := range fake.Files() {
			if strings.HasPrefix(f.Name, "research-") { // not the draft's file
				return f, true
			}
		}
		return slackfake.File{}, false
	}
	var f slackfake.File
	if !fake.WaitUntil(60*time.Second, func() (ok bool) { f, ok = reportFile(); return ok && f.Completed }) {
		t.Fatal("no report file was uploaded")
	}
	if !strings.Contains(string(f.Content), "# Heat pumps in cold climates") {
		t.Fatalf("report file:\n%s", f.Content)
	}
	if n := w.res.Count("research_plan"); n != 1 {
		t.Errorf("plan made %d times, want 1", n)
	}
}

// TestServeStopsWhenSlackRevokesTheAppTokenAfterStart: serve started fine,
// then the app-level token is revoked (Slack answers token_revoked when the
// connection is opened again). serve does not reconnect for ever: it exits
// 1 with one line on stderr naming SLACK_APP_TOKEN and where to fix it.
func TestServeStopsWhenSlackRevokesTheAppTokenAfterStart(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	fake := slackfake.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := w.startWith(t, serveEnv(fake), "serve")
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	fake.FailWith("apps.connections.open", 1, "token_revoked")
	fake.DropConnection()
	err := c.wait(t)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve ended with %v, want exit status 1; stderr:\n%s", err, c.log())
	}
	var line string
	for _, l := range strings.Split(c.log(), "\n") {
		if strings.HasPrefix(l, "researchbot: SLACK_APP_TOKEN") {
			line = l
		}
	}
	for _, want := range []string{`"token_revoked"`, "api.slack.com/apps"} {
		if !strings.Contains(line, want) {
			t.Errorf("no line 'researchbot: SLACK_APP_TOKEN: …%s…' on stderr:\n%s", want, c.log())
		}
	}
}
