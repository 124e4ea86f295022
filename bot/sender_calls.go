package bot

import (
	"context"

	"github.com/slack-go/slack"
)

// The Sender's Web API calls other than messages: links, files, views,
// users, the installation, conversations and streamed messages. Each makes
// one call on the Sender's client (429s retried, sender.go).

// Permalink is the permalink of the message ts in channel.
func (s *Sender) Permalink(ctx context.Context, channel, ts string) (string, error) {
	return s.api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: channel, Ts: ts})
}

// UploadFile uploads a file (files.getUploadURLExternal, the upload,
// files.completeUploadExternal). slack-go retries a 429 on either Web API
// call; the upload itself streams its body and is sent once.
func (s *Sender) UploadFile(ctx context.Context, params slack.UploadFileParameters) (*slack.FileSummary, error) {
	return s.api.UploadFileContext(ctx, params)
}

// DeleteFile deletes the file id.
func (s *Sender) DeleteFile(ctx context.Context, id string) error {
	return s.api.DeleteFileContext(ctx, id)
}

// FileInfo is the description of the file id (files.info).
func (s *Sender) FileInfo(ctx context.Context, id string) (*slack.File, error) {
	f, _, _, err := s.api.GetFileInfoContext(ctx, id, 0, 0)
	return f, err
}

// OpenView opens a modal with a trigger id. It is never retried after a
// 429: the trigger id expires 3 s after the click, sooner than Slack's
// shortest Retry-After would let a retry use it.
func (s *Sender) OpenView(ctx context.Context, triggerID string, view slack.ModalViewRequest) (*slack.ViewResponse, error) {
	return s.once.OpenViewContext(ctx, triggerID, view)
}

// UpdateView replaces the open modal viewID, if it is still at hash.
func (s *Sender) UpdateView(ctx context.Context, view slack.ModalViewRequest, hash, viewID string) (*slack.ViewResponse, error) {
	return s.api.UpdateViewContext(ctx, view, "", hash, viewID)
}

// PublishHome publishes user's App Home.
func (s *Sender) PublishHome(ctx context.Context, user string, view slack.HomeTabViewRequest) error {
	_, err := s.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
	return err
}

// UserInfo is Slack's profile of user (users.info).
func (s *Sender) UserInfo(ctx context.Context, user string) (*slack.User, error) {
	return s.api.GetUserInfoContext(ctx, user)
}

// AuthTest says whom the bot token belongs to (auth.test).
func (s *Sender) AuthTest(ctx context.Context) (*slack.AuthTestResponse, error) {
	return s.api.AuthTestContext(ctx)
}

// BotInfo describes the bot botID (bots.info).
func (s *Sender) BotInfo(ctx context.Context, botID string) (*slack.Bot, error) {
	return s.api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: botID})
}

// OpenConnection asks for a Socket Mode connection with the app-level
// token (apps.connections.open), as the start-up check of the token does.
func (s *Sender) OpenConnection(ctx context.Context) error {
	_, _, err := s.api.StartSocketModeContext(ctx)
	return err
}

// Replies is one page of a thread's messages (conversations.replies):
// the messages, whether there are more, and the next page's cursor.
func (s *Sender) Replies(ctx context.Context, params *slack.GetConversationRepliesParameters) ([]slack.Message, bool, string, error) {
	return s.api.GetConversationRepliesContext(ctx, params)
}

// History is one page of a conversation's messages (conversations.history).
func (s *Sender) History(ctx context.Context, params *slack.GetConversationHistoryParameters) (*slack.GetConversationHistoryResponse, error) {
	return s.api.GetConversationHistoryContext(ctx, params)
}

// StartStream starts a streamed message in channel (chat.startStream) and
// returns its channel and ts.
func (s *Sender) StartStream(ctx context.Context, channel string, opts ...slack.MsgOption) (string, string, error) {
	return s.api.StartStreamContext(ctx, channel, opts...)
}

// AppendStream adds to the streamed message ts (chat.appendStream).
func (s *Sender) AppendStream(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	_, _, err := s.api.AppendStreamContext(ctx, channel, ts, opts...)
	return err
}

// StopStream ends the streamed message ts, with opts as its last content
// (chat.stopStream).
func (s *Sender) StopStream(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	_, _, err := s.api.StopStreamContext(ctx, channel, ts, opts...)
	return err
}

// SetSuggestedPrompts sets an assistant thread's suggested prompts
// (assistant.threads.setSuggestedPrompts).
func (s *Sender) SetSuggestedPrompts(ctx context.Context, params slack.AssistantThreadsSetSuggestedPromptsParameters) error {
	return s.api.SetAssistantThreadsSuggestedPromptsContext(ctx, params)
}

// SetThreadTitle names an assistant thread (assistant.threads.setTitle).
func (s *Sender) SetThreadTitle(ctx context.Context, params slack.AssistantThreadsSetTitleParameters) error {
	return s.api.SetAssistantThreadsTitleContext(ctx, params)
}

// SetThreadStatus sets or clears an assistant thread's status
// (assistant.threads.setStatus).
func (s *Sender) SetThreadStatus(ctx context.Context, params slack.AssistantThreadsSetStatusParameters) error {
	return s.api.SetAssistantThreadsStatusContext(ctx, params)
}
