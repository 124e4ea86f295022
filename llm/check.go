package llm

import (
	"context"
	"time"
)

// Check asks the endpoint for its models (GET /models), once and without
// retries, so a process can tell at start whether the endpoint answers and
// accepts the key. The error is classified like Generate's: errors.Is(err,
// ErrUnreachable) when nothing answered, an *APIError when it refused.
func (c *Client) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, min(c.timeout, checkTimeout))
	defer cancel()
	if _, err := c.api.ListModels(ctx); err != nil {
		_, err = c.classify(ctx, err)
		return err
	}
	return nil
}

// checkTimeout bounds Check: an endpoint that takes longer to list its
// models is as good as down for a person waiting for the program to start.
const checkTimeout = 10 * time.Second
