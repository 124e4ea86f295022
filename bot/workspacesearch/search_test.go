package workspacesearch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/workspacesearch"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

var march2 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

type workspace struct {
	fake          *slackfake.Server
	now           time.Time
	pub, priv, dm string
	file          string
	searcher      *workspacesearch.Searcher
}

func newWorkspace(t *testing.T, opts workspacesearch.Options) *workspace {
	w := &workspace{now: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}
	w.fake = slackfake.New(t, slackfake.WithNow(func() time.Time { return w.now }))
	w.fake.AddChannel("C_INFRA", "infra", false)
	for _, u := range [][2]string{{"U_DANA", "dana"}, {"U_ADA", "ada"}} {
		w.fake.AddUser(u[0], u[1], "UTC")
	}
	w.fake.AddPrivateConversation("C_SEC", "security", "private_channel", "U_ADA", "U_DANA")
	w.fake.AddPrivateConversation("D_ADA_DANA", "", "im", "U_ADA", "U_DANA")
	w.fake.EnableSearch(time.Minute)
	w.pub = w.fake.AddSearchableMessage("C_INFRA", "U_DANA", "The build cache moved to the new cluster.", march2)
	w.priv = w.fake.AddSearchableMessage("C_SEC", "U_DANA", "The cluster credentials rotate on Fridays.", march2)
	w.dm = w.fake.AddSearchableMessage("D_ADA_DANA", "U_DANA", "Between us: the cluster is over budget.", march2)
	w.file = w.fake.AddSearchableFile("C_INFRA", "U_DANA", "Cluster plan", "The cluster plan for 2026.", march2)
	w.searcher = workspacesearch.New(slack.New(w.fake.BotToken(), slack.OptionAPIURL(w.fake.APIURL())), opts)
	return w
}

func (w *workspace) search(token, asker, channel string) pipeline.SearchOutcome {
	return w.searcher.Search(context.Background(), pipeline.SearchRequest{
		Text: "cluster", Kind: "web", Asker: asker, PersonToken: pipeline.PersonToken(token),
		Audience: pipeline.ChannelAudience(channel),
	})
}

// TestSearchGivesSourcesWithTheirVisibility: a public channel's message is
// public; a private channel's and a DM's are private to their conversation
// and to the asker; each is titled "#channel — @author", dated, linked by
// its permalink and carries its text.
func TestSearchGivesSourcesWithTheirVisibility(t *testing.T) {
	w := newWorkspace(t, workspacesearch.Options{})
	out := w.search(w.fake.IssueActionToken("U_ADA"), "U_ADA", "C_INFRA")
	if len(out.Errors) > 0 || len(out.Notes) > 0 {
		t.Fatalf("errors %q, notes %q", out.Errors, out.Notes)
	}
	byURL := map[string]pipeline.Hit{}
	for _, h := range out.Hits {
		byURL[h.URL] = h
	}
	for _, c := range []struct {
		url, title string
		vis        pipeline.Visibility
	}{
		{w.pub, "#infra — @dana", pipeline.Visibility{}},
		{w.priv, "#security — @dana", pipeline.Visibility{Conversation: "C_SEC", Reader: "U_ADA"}},
		{w.dm, "a direct message — @dana", pipeline.Visibility{Conversation: "D_ADA_DANA", Reader: "U_ADA"}},
		// Slack does not say where a file was shared: the asker's alone.
		{w.file, "Cluster plan — @dana", pipeline.Visibility{Reader: "U_ADA"}},
	} {
		h, ok := byURL[c.url]
		if !ok {
			t.Errorf("no hit %s among %+v", c.url, out.Hits)
			continue
		}
		if h.Title != c.title || h.Visibility != c.vis || h.Key != c.url || h.Kind != pipeline.KindWorkspace ||
			!h.Published.Equal(march2) || !strings.Contains(h.Text, "cluster") || h.Authors[0] != "@dana" {
			t.Errorf("hit %+v, want %q with visibility %+v", h, c.title, c.vis)
		}
	}
	calls := w.fake.Calls("assistant.search.context")
	if len(calls) != 2 || calls[0].Params["channel_types"] != "public_channel" || calls[1].Params["channel_types"] != "private_channel,mpim,im" || calls[0].Params["content_types"] != "messages,files" {
		t.Errorf("calls %+v, want one public and one private search", calls)
	}
}

// TestSearchSkipsWithoutAPermission: no token, an expired one, a channel
// switched off: nothing is asked of Slack (or nothing comes back) and the
// note says why; a rate limit is an error of this backend only.
func TestSearchSkipsWithoutAPermission(t *testing.T) {
	w := newWorkspace(t, workspacesearch.Options{Channels: []string{"C_INFRA"}})
	if out := w.search("", "U_ADA", "C_INFRA"); len(out.Hits) > 0 || len(out.Notes) != 1 || out.Notes[0] != workspacesearch.NoToken {
		t.Errorf("no token: %+v", out)
	}
	if out := w.search(w.fake.IssueActionToken("U_ADA"), "U_ADA", "C_OTHER"); len(out.Hits) > 0 || len(out.Notes) != 1 || out.Notes[0] != workspacesearch.ChannelOff {
		t.Errorf("channel off: %+v", out)
	}
	if n := len(w.fake.Calls("assistant.search.context")); n != 0 {
		t.Errorf("%d calls without a permission or in a channel switched off", n)
	}
	tok := w.fake.IssueActionToken("U_ADA")
	w.now = w.now.Add(2 * time.Minute)
	if out := w.search(tok, "U_ADA", "C_INFRA"); len(out.Hits) > 0 || len(out.Errors) > 0 || len(out.Notes) != 1 || out.Notes[0] != workspacesearch.TokenExpired {
		t.Errorf("expired token: %+v", out)
	}
	w.fake.FailNext("assistant.search.context", 1, 7)
	out := w.search(w.fake.IssueActionToken("U_ADA"), "U_ADA", "C_INFRA")
	if len(out.Errors) != 1 || !strings.Contains(out.Errors[0], "rate limited by Slack (retry after 7s)") || len(out.Hits) != 2 {
		t.Errorf("rate limited public search: %+v, want its error and the private search's 2 hits", out)
	}
	for _, e := range out.Errors {
		if strings.Contains(e, "actiontoken") {
			t.Errorf("an error shows the token: %s", e)
		}
	}
}
