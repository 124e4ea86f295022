package neverdomain

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

type streamDomains struct {
	saved []string
	err   error
}

func (s *streamDomains) NeverDomain(_ context.Context, id, domain, actor string) (string, error) {
	s.saved = append(s.saved, id+" "+domain+" "+actor)
	return "Heat <watch>", s.err
}

// TestSaveNeverDomain: a digest's choice goes to its stream, a channel
// run's to the channel's never list (taken off its only list, the other
// remembered settings kept); each answer says what was saved and how to
// undo it, and a failure says only this run skips the site. (That a run
// started in the channel then applies the list is bot's
// TestWithChannelNever.)
func TestSaveNeverDomain(t *testing.T) {
	ctx := context.Background()
	sd := &streamDomains{}
	_, rdb := redistest.Start(t)
	defaults := redisstore.NewChannelDefaults(rdb, "rb:")
	f, err := New(Config{Engine: noEngine{}, Streams: sd, Defaults: defaults, Kit: bot.Kit{Sender: bot.NewSender(bot.SenderConfig{BotToken: "xoxb-unused"})}})
	if err != nil {
		t.Fatal(err)
	}

	digest := &pipeline.Run{Origin: pipeline.Origin{StreamID: "st-1", Channel: "C0DIGEST"}}
	got := f.saveNeverDomain(ctx, digest, "spam.example", "U1")
	if len(sd.saved) != 1 || sd.saved[0] != "st-1 spam.example U1" {
		t.Errorf("stream saves %q", sd.saved)
	}
	if !strings.Contains(got, "never list of stream *Heat &lt;watch&gt;*") || !strings.Contains(got, "/research stream domains") {
		t.Errorf("stream answer %q", got)
	}
	sd.err = errors.New("stream not found")
	if got := f.saveNeverDomain(ctx, digest, "spam.example", "U1"); !strings.Contains(got, "only this run skips it") {
		t.Errorf("failed stream save answer %q", got)
	}

	if err := defaults.Put(ctx, "C0CHAN", map[string]string{"depth": "quick", "only_domains": "spam.example,example.org", "never_domains": "ads.example"}); err != nil {
		t.Fatal(err)
	}
	run := &pipeline.Run{Origin: pipeline.Origin{Channel: "C0CHAN"}}
	got = f.saveNeverDomain(ctx, run, "spam.example", "U1")
	if !strings.Contains(got, "Saved to this channel's never list") || !strings.Contains(got, "Never these sites") {
		t.Errorf("channel answer %q", got)
	}
	fields, err := defaults.Get(ctx, "C0CHAN")
	if err != nil {
		t.Fatal(err)
	}
	if fields["never_domains"] != "ads.example,spam.example" || fields["only_domains"] != "example.org" || fields["depth"] != "quick" {
		t.Errorf("channel defaults after saving: %v", fields)
	}
}

// noEngine is an Engine for tests that never reach it.
type noEngine struct{}

func (noEngine) NeverDomain(context.Context, string, string, string) (*pipeline.Run, string, error) {
	return nil, "", errors.New("not in this test")
}
