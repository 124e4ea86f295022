package bot

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"
)

// postEventType is the event_type of the message metadata carried by every
// message the bot posts for a run and must find again (postOnce).
const postEventType = "researchbot_post"

// Bounds of the look for an earlier post (postOnce.find).
const (
	// postIntentTTL is how long the marker of a post that may be in flight
	// is kept: a takeover comes within minutes of the kill.
	postIntentTTL = 2 * 24 * time.Hour
	// postLookSlack is how far before the marker the look begins (the
	// clocks of the replicas and Slack's differ a little).
	postLookSlack = time.Minute
	// postLookPages bounds the pages of messages read in one look, and
	// postLookLimit their size.
	postLookPages = 5
	postLookLimit = 100
)

// postKey names one message the bot posts for a run and must find again:
// the run's root message, its progress message, its outcome, a checkpoint's
// message. It is carried in the message's metadata
// ({"event_type":"researchbot_post","event_payload":{"run":…,"post":…}}).
type postKey struct {
	Run  string
	Post string // "root", "progress", "outcome", "checkpoint:<id>:<attempt>[:lost…]"
}

// metadata is the message metadata that names the post.
func (k postKey) metadata() slack.SlackMetadata {
	return slack.SlackMetadata{EventType: postEventType, EventPayload: map[string]any{"run": k.Run, "post": k.Post}}
}

// is reports whether a message's metadata names the post k.
func (k postKey) is(md slack.SlackMetadata) bool {
	if md.EventType != postEventType {
		return false
	}
	run, _ := md.EventPayload["run"].(string)
	post, _ := md.EventPayload["post"].(string)
	return run == k.Run && post == k.Post
}

// postMemory is what postOnce remembers: when a post may have been made
// (SlackMemory's PostIntent).
type postMemory interface {
	PostIntent(ctx context.Context, runID, post string) (at time.Time, found bool, err error)
	RememberPostIntent(ctx context.Context, runID, post string, at time.Time, ttl time.Duration) error
}

// postOnce posts the messages a run must show once, across a process
// killed while Slack handled its chat.postMessage (the message is in the
// conversation; the process never heard its ts and recorded nothing).
//
// Before posting it records an intent marker (the post may be in flight
// since now), and every such message carries its postKey as metadata. The
// caller records the ts it gets back, as before. A process about to post a
// key whose ts its caller does not know, but whose marker is left, looks
// first (conversations.replies for a thread's message, conversations.history
// for a message at the top of a conversation, include_all_metadata=true,
// from the marker's time on) for the bot's message with that metadata; found,
// it updates it with what it was about to post and returns its ts as if it
// had posted it. Without a marker (every normal post) it makes no extra call.
//
// The look never blocks a post: when it fails (a history scope missing, not
// in the channel, any error) the message is posted again, as before this
// existed, and one WARN says which scope is missing and that the message
// may show twice.
type postOnce struct {
	send  *Sender
	mem   postMemory
	clock quartz.Clock
	log   *slog.Logger
	// once429 leaves a 429 on the post to the caller (which paces its
	// own retries, as progress edits do) instead of waiting it out.
	once429 bool
}

// post shows (blocks, text) as the post k in channel, in thread when given,
// and returns the channel and ts of the message: the one it posted, or the
// one an earlier process posted (then updated).
func (o *postOnce) post(ctx context.Context, k postKey, channel, thread string, blocks []slack.Block, text string) (string, string, error) {
	log := o.log.With("run_id", k.Run, "post", k.Post)
	at, marked, err := o.mem.PostIntent(ctx, k.Run, k.Post)
	if err != nil {
		log.Warn("bot: reading whether this message may have been posted failed; posting it", "err", err)
	}
	if marked {
		if ch, ts, ok := o.find(ctx, log, k, channel, thread, at); ok {
			if err := o.send.Update(ctx, ch, ts, blocks, text); err != nil {
				log.Warn("bot: updating the message an earlier process posted failed; it shows what it showed", "ts", ts, "err", err)
			}
			log.Info("bot: found the message an earlier process posted before it died; carrying on with it", "ts", ts)
			return ch, ts, nil
		}
	}
	if err := o.mem.RememberPostIntent(ctx, k.Run, k.Post, o.clock.Now(), postIntentTTL); err != nil {
		log.Warn("bot: recording that a message is being posted failed; posting it anyway", "err", err)
	}
	opts := []slack.MsgOption{quiet(blocks, text), slack.MsgOptionMetadata(k.metadata())}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	send := o.send
	if o.once429 {
		send = send.Paced()
	}
	ch, ts, err := send.PostMessage(ctx, channel, opts...)
	ch = cmp.Or(ch, channel)
	return ch, ts, err
}

// find looks for the bot's message carrying k's metadata, posted in
// channel (in thread when given) since about at; ok=false when there is
// none or the look failed (logged).
func (o *postOnce) find(ctx context.Context, log *slog.Logger, k postKey, channel, thread string, at time.Time) (ch, ts string, ok bool) {
	if strings.HasPrefix(channel, "U") || strings.HasPrefix(channel, "W") {
		// A user id: the message went to a DM whose id only
		// conversations.open would tell.
		log.Warn("bot: cannot look for a message an earlier process may have posted to a person's DM; posting it again, so it may show twice")
		return "", "", false
	}
	oldest := slackTS(at.Add(-postLookSlack))
	var cursor string
	for range postLookPages {
		var msgs []slack.Message
		var more bool
		var err error
		if thread != "" {
			msgs, more, cursor, err = o.send.Replies(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: thread, Oldest: oldest, Limit: postLookLimit, Cursor: cursor, IncludeAllMetadata: true})
		} else {
			var h *slack.GetConversationHistoryResponse
			h, err = o.send.History(ctx, &slack.GetConversationHistoryParameters{
				ChannelID: channel, Oldest: oldest, Limit: postLookLimit, Cursor: cursor, IncludeAllMetadata: true})
			if err == nil {
				msgs, more, cursor = h.Messages, h.HasMore, h.ResponseMetaData.NextCursor
			}
		}
		if err != nil {
			code := SlackErrorCode(err)
			if code == "missing_scope" {
				log.Warn("bot: cannot look for a message an earlier process may have posted: the app lacks the scope "+historyScope(channel)+"; posting it again, so it may show twice",
					"missing_scope", historyScope(channel), "err", err)
			} else {
				log.Warn("bot: looking for a message an earlier process may have posted failed; posting it again, so it may show twice", "err", err)
			}
			return "", "", false
		}
		for _, m := range msgs {
			if m.BotID != "" && k.is(m.Metadata) && (ts == "" || tsBefore(m.Timestamp, ts)) {
				ts = m.Timestamp
			}
		}
		if ts != "" {
			return channel, ts, true
		}
		if !more || cursor == "" {
			break
		}
	}
	return "", "", false
}

// historyScope names the scope conversations.history and .replies need in
// channel: channels:history in a public channel, groups:history in a
// private one (their ids both start with C nowadays), mpim:history in a
// group DM, im:history in a DM.
func historyScope(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im:history"
	case strings.HasPrefix(channel, "G"):
		return "groups:history or mpim:history"
	}
	return "channels:history (groups:history in a private channel)"
}

// slackTS is t as a Slack timestamp ("seconds.micros").
func slackTS(t time.Time) string {
	us := t.UnixMicro()
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

// tsBefore orders Slack timestamps ("seconds.micros") numerically.
func tsBefore(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	if as != bs {
		return as < bs
	}
	return rightPad(af, 6) < rightPad(bf, 6) // fractions: "5" is .500000
}

// rightPad pads s with zeros on the right to n characters.
func rightPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat("0", n-len(s))
}
