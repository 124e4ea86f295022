package blockkit

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// Sharing a report from the assistant panel to a channel: the offer under a
// finished report in an assistant thread, the form to choose another
// channel, what the channel sees, and the answers (shared, refused).

// Action ids, form callback id and block id of sharing.
const (
	// ActionShare shares to the channel the button names (ShareValue).
	ActionShare = "share_report"
	// ActionShareOther opens the form to choose a channel (value: run id).
	ActionShareOther = "share_report_other"
	// ShareCallback is the callback id of the form (private metadata: run id).
	ShareCallback = "share_report"
	// ShareChannelBlock is the block id of the form's channel picker.
	ShareChannelBlock = "share_channel"
)

// ShareValue is the value of a Share button: the run and the channel.
func ShareValue(runID, channel string) string { return runID + " " + channel }

// ParseShareValue reads a ShareValue.
func ParseShareValue(v string) (runID, channel string, ok bool) {
	runID, channel, ok = strings.Cut(v, " ")
	return runID, channel, ok && runID != "" && isChannelID(channel)
}

// RenderShareOffer is posted under a finished report in an assistant
// thread: a button sharing it to channel (the one the person was viewing;
// none when "") and one to choose another channel.
func RenderShareOffer(runID, channel string) []slack.Block {
	text := "*Share this report?* I post its summary and the file in a channel — only if everyone there could read every source it used."
	buttons := []slack.BlockElement{}
	if isChannelID(channel) {
		text = "*Share this report to " + ChannelRef(channel) + "?* I post its summary and the file there — only if everyone there could read every source it used."
		buttons = append(buttons, &slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionShare, Value: ShareValue(runID, channel), Style: slack.StylePrimary, Text: Plain("Share to this channel", MaxButtonText)})
	}
	buttons = append(buttons, &slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionShareOther, Value: runID, Text: Plain("Choose a channel…", MaxButtonText)})
	return []slack.Block{Section(text), slack.NewActionBlock("share_"+runID, buttons...)}
}

// ShareOfferText is the notification text of the offer.
const ShareOfferText = "Share this report to a channel?"

// ShareModal is the form choosing the channel to share run runID's report
// to, pre-set to channel when there is one.
func ShareModal(runID, channel string) slack.ModalViewRequest {
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeConversations, Plain("Choose a channel", 75), ValueActionID)
	if isChannelID(channel) {
		sel.InitialConversation = channel
	}
	sel.Filter = &slack.SelectBlockElementFilter{Include: []string{"public", "private"}, ExcludeBotUsers: true}
	in := slack.NewInputBlock(ShareChannelBlock, Plain("Channel", MaxInputLabel), Plain("I post the summary and the file there, if its members could read every source the report used. Invite me first with /invite @researchbot.", MaxInputLabel), sel)
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      ShareCallback,
		Title:           Plain("Share the report", MaxModalTitle),
		Submit:          Plain("Share", MaxModalTitle),
		Close:           Plain("Cancel", MaxModalTitle),
		PrivateMetadata: runID,
		Blocks:          slack.Blocks{BlockSet: []slack.Block{in}},
	}
}

// RenderSharedReport is what a channel sees of a shared report: who shared
// it, then the report summary (the file follows in its thread).
func RenderSharedReport(r *pipeline.Run, by string) []slack.Block {
	lead := ContextText(fmt.Sprintf(":outbox_tray: Shared by %s from their research with researchbot.", userRef(by)))
	return limitBlocks(append([]slack.Block{lead}, RenderFinished(r)...), MaxBlocks, 2, "…more in the attached report.")
}

// RenderShareRecord is the record in the assistant thread of a share: who,
// where, when.
func RenderShareRecord(by, channel string, at time.Time) []slack.Block {
	return []slack.Block{ContextText(fmt.Sprintf(":outbox_tray: %s shared this report to %s · %s", userRef(by), ChannelRef(channel), SlackDate(at)))}
}

// ShareRecordText is the notification text of the record.
func ShareRecordText(channel string) string { return "Report shared to " + ChannelRef(channel) }

// ShareRefusal says why the report cannot go to channel: how many of the
// sources it used the channel's members could not all read (never which,
// nor what they say), and what to do instead.
func ShareRefusal(channel string, withheld int) string {
	return fmt.Sprintf("I can't share this report to %s: %s it used came from conversations or files that not everyone there can read, and the report may repeat what they say. Ask your question in %s instead (`/research &lt;question&gt;`): I'll use only what its members can read.",
		ChannelRef(channel), sourcesCount(withheld), ChannelRef(channel))
}

// ShareNotInChannel says the bot must be invited to channel first.
func ShareNotInChannel(channel string) string {
	return fmt.Sprintf("I'm not in %s, so I can't post there: invite me to %s first (`/invite @researchbot` in the channel), then share again.", ChannelRef(channel), ChannelRef(channel))
}

// ShareNotRequester says only the person who asked may share a report.
func ShareNotRequester(requester string) string {
	return "Only " + userRef(requester) + ", who asked for this research, can share its report."
}

// userRef renders a user id as a mention, or a placeholder.
func userRef(id string) string {
	if isUserID(id) {
		return "<@" + id + ">"
	}
	return "someone"
}

// sourcesCount is "1 source" or "n sources".
func sourcesCount(n int) string {
	if n == 1 {
		return "1 source"
	}
	return fmt.Sprintf("%d sources", n)
}
