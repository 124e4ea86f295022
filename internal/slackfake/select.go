package slackfake

import (
	"context"
	"fmt"
)

// SelectOption delivers a block_actions envelope for choosing the option
// whose value is value in the static_select element actionID on message
// messageTS, in Slack's documented shape: the action's type is
// static_select, with selected_option (the option's text and value) and the
// element's placeholder. It fails with ErrNoSuchAction when the message has
// no such static_select or the menu no such option, because no user could
// choose it.
func (s *Server) SelectOption(ctx context.Context, userID, channelID, messageTS, actionID, value string) (Ack, error) {
	return s.click(ctx, userID, channelID, messageTS, actionID, "", func(el, action map[string]any) error {
		if el["type"] != "static_select" {
			return fmt.Errorf("%w: %q on %s/%s is a %v element, not static_select", ErrNoSuchAction, actionID, channelID, messageTS, el["type"])
		}
		opts, _ := el["options"].([]any)
		for _, o := range opts {
			opt, _ := o.(map[string]any)
			if opt["value"] == value {
				action["selected_option"] = map[string]any{"text": opt["text"], "value": value}
				if p, ok := el["placeholder"]; ok {
					action["placeholder"] = p
				}
				return nil
			}
		}
		return fmt.Errorf("%w: menu %q on %s/%s has no option %q", ErrNoSuchAction, actionID, channelID, messageTS, value)
	})
}
