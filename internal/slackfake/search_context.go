package slackfake

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// assistant.search.context (Slack's Real-time Search API), as Slack
// documents it: the bot token with the action_token Slack sent with a
// person's message event searches, on that person's behalf, the messages
// of the channel_types asked for ("public_channel", "private_channel",
// "mpim", "im"; comma-separated, public_channel by default) and the
// content_types asked for ("messages", "files"; messages by default), at most limit
// (≤ 20, default 20) of them, after and before unix times. Public channels
// are searched for anyone; a private channel, group DM or DM only when the
// person is a member. The answer is
//
//	{"ok": true, "results": {"messages": [{"author_user_id", "author_name",
//	  "team_id", "channel_id", "channel_name", "message_ts", "content",
//	  "is_author_bot", "permalink"}], "files": [{"uploader_user_id",
//	  "author_user_id", "author_name", "team_id", "file_id", "date_created",
//	  "date_updated", "title", "file_type", "permalink", "content"}]},
//	 "response_metadata": {"next_cursor": ""}}
//
// A missing, unknown or expired action_token answers invalid_action_token
// (the code public clients of the API handle; Slack's method page lists no
// errors). The fake's search matches any query word of four letters or more,
// case-insensitively, best (most words) first.

// searchState is the workspace the fake's Real-time Search sees.
type searchState struct {
	// tokenTTL is how long an action token lives; 0 means search is off:
	// events carry no action token.
	tokenTTL time.Duration
	tokens   map[string]actionToken
	// private are the private conversations: kind ("private_channel",
	// "mpim" or "im") and members.
	private map[string]privateConversation
	corpus  []searchMessage
}

type actionToken struct {
	user   string
	issued time.Time
}

type privateConversation struct {
	kind    string
	members []string
}

type searchMessage struct {
	channel, user, ts, text string
	// file is set for a file shared in channel (title, id): it comes back
	// among "files" when content_types asks for them.
	fileID, title string
}

// EnableSearch makes the message events of DMs and assistant threads, and
// app_mention events, carry an action_token (in "assistant_thread", as
// Slack sends it) valid for ttl from the event, for assistant.search.context.
func (s *Server) EnableSearch(ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rts.tokenTTL = ttl
}

// IssueActionToken returns a new action token of userID, as Slack puts in
// an event of theirs.
func (s *Server) IssueActionToken(userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issueActionTokenLocked(userID)
}

func (s *Server) issueActionTokenLocked(userID string) string {
	if s.rts.tokens == nil {
		s.rts.tokens = map[string]actionToken{}
	}
	tok := s.nextID("actiontoken-") + "." + userID
	s.rts.tokens[tok] = actionToken{user: userID, issued: s.now()}
	return tok
}

// withActionToken adds an action token of userID to event when search is
// enabled. The caller holds s.mu.
func (s *Server) withActionToken(event map[string]any, userID string) {
	if s.rts.tokenTTL > 0 {
		event["assistant_thread"] = map[string]any{"action_token": s.issueActionTokenLocked(userID)}
	}
}

// AddPrivateConversation registers a private channel (kind
// "private_channel"), group DM ("mpim") or DM ("im") with its members; the
// bot is not in it.
func (s *Server) AddPrivateConversation(id, name, kind string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = &channel{id: id, name: name, im: kind == "im"}
	if s.rts.private == nil {
		s.rts.private = map[string]privateConversation{}
	}
	s.rts.private[id] = privateConversation{kind: kind, members: slices.Clone(members)}
}

// AddSearchableMessage stores a message of userID in channelID, posted at
// at, for search (no event is sent), and returns its permalink.
func (s *Server) AddSearchableMessage(channelID, userID, text string, at time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := strconv.FormatInt(at.Unix(), 10) + "." + strconv.Itoa(100000+len(s.rts.corpus))
	s.rts.corpus = append(s.rts.corpus, searchMessage{channel: channelID, user: userID, ts: ts, text: text})
	return permalink(channelID, ts)
}

// AddSearchableFile stores a file userID shared in channelID at at, with
// its text, for search (content_types=files), and returns its permalink.
func (s *Server) AddSearchableFile(channelID, userID, title, text string, at time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := strconv.FormatInt(at.Unix(), 10) + "." + strconv.Itoa(100000+len(s.rts.corpus))
	id := s.nextID("F")
	s.rts.corpus = append(s.rts.corpus, searchMessage{channel: channelID, user: userID, ts: ts, text: text, fileID: id, title: title})
	return filePermalink(userID, id, title)
}

func filePermalink(user, id, title string) string {
	return "https://" + TeamDomain + ".slack.com/files/" + user + "/" + id + "/" + strings.ReplaceAll(strings.ToLower(title), " ", "_")
}

func permalink(channel, ts string) string {
	return "https://" + TeamDomain + ".slack.com/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
}

// kindOf is a conversation's channel type for search. The caller holds s.mu.
func (s *Server) kindOf(id string) string {
	if p, ok := s.rts.private[id]; ok {
		return p.kind
	}
	if c, ok := s.channels[id]; ok && c.im {
		return "im"
	}
	return "public_channel"
}

// canRead reports whether user may read conversation id: a public
// channel, anyone; a private one, its members; the bot's DM with a user
// (AddUser), that user. The caller holds s.mu.
func (s *Server) canRead(user, id string) bool {
	if p, ok := s.rts.private[id]; ok {
		return slices.Contains(p.members, user)
	}
	if c, ok := s.channels[id]; ok && c.im {
		return c.name == user
	}
	return true
}

func (s *Server) assistantSearchContext(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	query := strings.TrimSpace(p["query"])
	if query == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: query")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, ok := s.rts.tokens[p["action_token"]]
	if !ok || s.rts.tokenTTL <= 0 || s.now().Sub(tok.issued) > s.rts.tokenTTL {
		return nil, errCode("invalid_action_token")
	}
	contents := []string{"messages"}
	if c := strings.TrimSpace(p["content_types"]); c != "" {
		contents = strings.Split(c, ",")
	}
	types := []string{"public_channel"}
	if t := strings.TrimSpace(p["channel_types"]); t != "" {
		types = strings.Split(t, ",")
	}
	limit := 20
	if n, err := strconv.Atoi(p["limit"]); err == nil && n > 0 && n < limit {
		limit = n
	}
	after, _ := strconv.ParseInt(p["after"], 10, 64)
	before, _ := strconv.ParseInt(p["before"], 10, 64)
	var words []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if len(w) >= 4 {
			words = append(words, w)
		}
	}
	type scored struct {
		m     searchMessage
		score int
	}
	var found []scored
	for _, m := range s.rts.corpus {
		if !slices.Contains(types, s.kindOf(m.channel)) || !s.canRead(tok.user, m.channel) {
			continue
		}
		if want := "messages"; m.fileID != "" {
			want = "files"
			if !slices.Contains(contents, want) {
				continue
			}
		} else if !slices.Contains(contents, want) {
			continue
		}
		sec, _ := strconv.ParseInt(strings.SplitN(m.ts, ".", 2)[0], 10, 64)
		if after > 0 && sec < after || before > 0 && sec > before {
			continue
		}
		n := 0
		for _, w := range words {
			if strings.Contains(strings.ToLower(m.text), w) {
				n++
			}
		}
		if n > 0 {
			found = append(found, scored{m, n})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	msgs, files := []any{}, []any{}
	for _, f := range found[:min(limit, len(found))] {
		if f.m.fileID != "" {
			sec, _ := strconv.ParseInt(strings.SplitN(f.m.ts, ".", 2)[0], 10, 64)
			files = append(files, map[string]any{
				"uploader_user_id": f.m.user, "author_user_id": f.m.user, "author_name": s.users[f.m.user].name,
				"team_id": TeamID, "file_id": f.m.fileID, "date_created": sec, "date_updated": sec,
				"title": f.m.title, "file_type": "text", "permalink": filePermalink(f.m.user, f.m.fileID, f.m.title),
				"content": f.m.text,
			})
			continue
		}
		out := map[string]any{
			"author_user_id": f.m.user, "author_name": s.users[f.m.user].name, "team_id": TeamID,
			"channel_id": f.m.channel, "message_ts": f.m.ts, "content": f.m.text, "is_author_bot": false,
			"permalink": permalink(f.m.channel, f.m.ts),
		}
		if c := s.channels[f.m.channel]; c != nil && !c.im {
			out["channel_name"] = c.name
		}
		msgs = append(msgs, out)
	}
	results := map[string]any{"messages": msgs}
	if slices.Contains(contents, "files") {
		results["files"] = files
	}
	return map[string]any{"results": results, "response_metadata": map[string]any{"next_cursor": ""}}, nil
}
