package bot

import (
	"context"
)

// The streams as the App routes them: "/research stream …", the stream
// messages' buttons and the mentions in a stream's creation conversation
// (the App Home lists streams through its own port, in bot/home). The feature itself is package bot/streams, which bot does
// not import: the assembly builds a *streams.Feature and sets it here.

// StreamsUIConfig configures the streams feature of an App; its zero
// value leaves streams off.
type StreamsUIConfig struct {
	// Handler handles "/research stream …" (the assembly passes
	// *streams.Feature); nil answers that streams are not enabled.
	Handler StreamHandler
	// Mentions takes the mentions in threads it holds a conversation in
	// (the assembly passes *streams.Feature); nil treats every mention in a
	// thread as a follow-up question.
	Mentions MentionHandler
}

// StreamCommand is a "/research stream …" invocation.
type StreamCommand struct {
	TeamID, ChannelID, UserID string
	Args                      string // everything after "stream"
	TriggerID, ResponseURL    string
	// InChannel and InThread, when set, hold a new stream's creation
	// conversation in that existing thread (an assistant panel thread)
	// instead of a new thread in ChannelID, which still gets the digests.
	InChannel, InThread string
}

// StreamHandler handles research stream commands and answers them itself
// (through the command's response_url); an error is answered generically.
// Its Register adds the routes of the stream messages' buttons.
type StreamHandler interface {
	HandleStream(ctx context.Context, cmd StreamCommand) error
	Registrar
}
