// Package workspacesearch searches the team's own Slack workspace for a
// run, with Slack's Real-time Search API (assistant.search.context), on
// behalf of the person who asked: with the action_token Slack sent with
// their interaction, so only what they can read comes back.
//
// Each query is asked twice: once of public channels, whose messages
// anyone may read (the zero pipeline.Visibility), and once of private
// channels, group DMs and DMs, whose messages are private to their
// conversation and to the asker (pipeline.Visibility{Conversation, Reader}).
// Files come back too, with their text; Slack does not say where a file was
// shared, so a file is the asker's alone (pipeline.Visibility{Reader}).
// Slack's own channel_types decide which is which, so no channel's privacy
// is guessed; a result of the public search in a DM or group DM id is still
// treated as private (fail closed). The pipeline then withholds what the
// run's audience may not read (architecture invariant 12).
//
// Without a token (a digest, a run resumed without its person, an expired
// token) workspace search is skipped, and the outcome's note says so.
package workspacesearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// API is the Slack Web API method the searcher calls (*slack.Client has it).
type API interface {
	SearchAssistantContextContext(ctx context.Context, p slack.AssistantSearchContextParameters) (*slack.AssistantSearchContextResponse, error)
}

// Notes the searcher gives when it does not search.
const (
	NoToken      = "Workspace search skipped: no permission token from the person who asked"
	TokenExpired = "Workspace search skipped: the permission token of the person who asked has expired"
	ChannelOff   = "Workspace search skipped: it is switched off for this channel"
)

// BackendName names the searcher in errors and metrics.
const BackendName = "slack-workspace"

// DefaultLimit is how many results one call asks for (Slack allows 20).
const DefaultLimit = 8

// Options configure a Searcher.
type Options struct {
	// Limit is how many results each of the two calls asks for; 0 means
	// DefaultLimit.
	Limit int
	// Channels, when not empty, are the only conversations whose runs
	// search the workspace (the per-channel switch); "*" means all.
	Channels []string
	// Timeout bounds one call; 0 means 15 s.
	Timeout time.Duration
}

// Searcher is a pipeline.Searcher over a workspace.
type Searcher struct {
	api  API
	opts Options
}

// New returns the searcher of the workspace api is authorised for.
func New(api API, opts Options) *Searcher {
	if opts.Limit <= 0 || opts.Limit > 20 {
		opts.Limit = DefaultLimit
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	return &Searcher{api: api, opts: opts}
}

// expiredToken are the errors Slack gives for an action token that is no
// longer valid.
var expiredToken = map[string]bool{"invalid_action_token": true, "token_expired": true}

// Search asks the workspace for q on behalf of q.Asker. Academic queries
// are not asked: a workspace holds no papers.
func (s *Searcher) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	if q.Kind == "academic" {
		return pipeline.SearchOutcome{}
	}
	if !s.switchedOn(q.Audience.Conversation) {
		return pipeline.SearchOutcome{Notes: []string{ChannelOff}}
	}
	if q.PersonToken == "" || q.Asker == "" {
		return pipeline.SearchOutcome{Notes: []string{NoToken}}
	}
	var out pipeline.SearchOutcome
	for _, private := range []bool{false, true} {
		hits, err := s.call(ctx, q, private)
		if err != nil {
			if expiredToken[slackCode(err)] {
				return pipeline.SearchOutcome{Hits: out.Hits, Notes: []string{TokenExpired}}
			}
			out.Errors = append(out.Errors, describe(err))
			continue
		}
		out.Hits = append(out.Hits, hits...)
	}
	return out
}

// switchedOn reports whether runs in conversation may search the workspace.
func (s *Searcher) switchedOn(conversation string) bool {
	if len(s.opts.Channels) == 0 || slices.Contains(s.opts.Channels, "*") {
		return true
	}
	return conversation != "" && slices.Contains(s.opts.Channels, conversation)
}

// channelTypes are what each call asks for.
var (
	publicTypes  = []string{"public_channel"}
	privateTypes = []string{"private_channel", "mpim", "im"}
)

func (s *Searcher) call(ctx context.Context, q pipeline.SearchRequest, private bool) ([]pipeline.Hit, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	p := slack.AssistantSearchContextParameters{
		Query: q.Text, ActionToken: q.PersonToken.Reveal(), ChannelTypes: publicTypes,
		ContentTypes: []string{"messages", "files"}, Limit: s.opts.Limit,
	}
	if private {
		p.ChannelTypes = privateTypes
	}
	if !q.Since.IsZero() {
		p.After = q.Since.Unix()
	}
	res, err := s.api.SearchAssistantContextContext(ctx, p)
	if err != nil {
		return nil, err
	}
	hits := make([]pipeline.Hit, 0, len(res.Results.Messages)+len(res.Results.Files))
	for _, m := range res.Results.Messages {
		if h, ok := hit(m, q.Asker, private); ok {
			hits = append(hits, h)
		}
	}
	for _, f := range res.Results.Files {
		if h, ok := fileHit(f, q.Asker); ok {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// fileHit is one file as a source, read from the text Slack returns with it
// ("content"), titled "Q3 plan.pdf — @dana". Slack does not say where a
// file was shared, so it is the asker's alone: a file reaches only a report
// read by the asker alone (fail closed).
func fileHit(f slack.AssistantSearchContextFile, asker string) (pipeline.Hit, bool) {
	text := strings.TrimSpace(f.Content)
	if f.Permalink == "" || text == "" {
		return pipeline.Hit{}, false
	}
	name := strings.TrimSpace(f.Title)
	name = cmp.Or(name, "a file")
	h := pipeline.Hit{
		Key: f.Permalink, URL: f.Permalink, Title: name, Snippet: snippet(text), Text: text,
		Backend: BackendName, Kind: pipeline.KindWorkspace, Heuristic: 0.6,
		Visibility: pipeline.Visibility{Reader: asker},
	}
	if f.DateCreated > 0 {
		h.Published = time.Unix(f.DateCreated, 0).UTC()
	}
	if a := strings.TrimPrefix(strings.TrimSpace(f.AuthorName), "@"); a != "" {
		h.Title += " — @" + a
		h.Authors = []string{"@" + a}
	}
	return h, true
}

// hit is one message as a source: keyed and linked by its permalink, titled
// "#infra — @dana", dated by its ts, with its whole text. A message of the
// private call, or in a DM or group DM whatever the call, is private to its
// conversation and to the asker.
func hit(m slack.AssistantSearchContextMessage, asker string, private bool) (pipeline.Hit, bool) {
	text := strings.TrimSpace(m.Content)
	if m.Permalink == "" || text == "" {
		return pipeline.Hit{}, false
	}
	h := pipeline.Hit{
		Key: m.Permalink, URL: m.Permalink, Title: title(m), Snippet: snippet(text), Text: text,
		Backend: BackendName, Kind: pipeline.KindWorkspace, Published: tsTime(m.MessageTS), Heuristic: 0.6,
	}
	if a := author(m); a != "" {
		h.Authors = []string{a}
	}
	if private || !publicID(m.ChannelID) {
		h.Visibility = pipeline.Visibility{Conversation: m.ChannelID, Reader: asker}
	}
	return h, true
}

// publicID reports whether a channel id can name a public channel: DMs
// (D…) and group DMs or old private channels (G…) cannot; a missing id is
// not known to be public.
func publicID(id string) bool {
	return id != "" && !strings.HasPrefix(id, "D") && !strings.HasPrefix(id, "G")
}

// title is "#infra — @dana", or "a direct message — @dana" when Slack
// gives no channel name.
func title(m slack.AssistantSearchContextMessage) string {
	where := "a direct message"
	if n := strings.TrimPrefix(strings.TrimSpace(m.ChannelName), "#"); n != "" {
		where = "#" + n
	}
	if a := author(m); a != "" {
		return where + " — " + a
	}
	return where
}

func author(m slack.AssistantSearchContextMessage) string {
	if n := strings.TrimPrefix(strings.TrimSpace(m.AuthorName), "@"); n != "" {
		return "@" + n
	}
	if m.AuthorUserID != "" {
		return "<@" + m.AuthorUserID + ">"
	}
	return ""
}

func snippet(text string) string {
	const most = 300
	if r := []rune(text); len(r) > most {
		return string(r[:most]) + "…"
	}
	return text
}

// tsTime is a message ts ("1772409600.000100") as a time; zero when it is not one.
func tsTime(ts string) time.Time {
	sec, _, _ := strings.Cut(ts, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

func slackCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// describe is a failed call for the run's errors: the backend's name and
// Slack's error code, or that Slack limited the rate; never the token.
func describe(err error) string {
	var rl *slack.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return fmt.Sprintf("search backend %s: rate limited by Slack (retry after %s)", BackendName, rl.RetryAfter.Round(time.Second))
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("search backend %s: no answer in time", BackendName)
	case slackCode(err) != "":
		return fmt.Sprintf("search backend %s: Slack answered %s", BackendName, slackCode(err))
	}
	return fmt.Sprintf("search backend %s: %v", BackendName, err)
}

// Dial returns the searcher of the workspace whose bot token is botToken,
// on the Web API at apiURL ("" for Slack's), with httpClient (nil for the
// default one).
func Dial(botToken, apiURL string, httpClient *http.Client, opts Options) *Searcher {
	var o []slack.Option
	if apiURL != "" {
		o = append(o, slack.OptionAPIURL(apiURL))
	}
	if httpClient != nil {
		o = append(o, slack.OptionHTTPClient(httpClient))
	}
	return New(slack.New(botToken, o...), opts)
}

// Configured returns the workspace searcher cfg asks for (SLACK_WORKSPACE_SEARCH),
// or none.
func Configured(on bool, botToken, apiURL string, channels []string, httpClient *http.Client) []pipeline.Searcher {
	if !on || botToken == "" {
		return nil
	}
	return []pipeline.Searcher{Dial(botToken, apiURL, httpClient, Options{Channels: channels})}
}
