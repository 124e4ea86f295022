package llm

// One chat completion: the request (reasoning models' parameters), retries
// with backoff and Retry-After, and the classification of failures into this
// package's errors.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	openai "github.com/sashabaranov/go-openai"

	"github.com/researchbot/researchbot/internal/clockwait"
)

// isReasoningModel reports whether model only accepts max_completion_tokens
// and its default temperature.
func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// complete makes one chat completion with retries and returns the reply
// content and finish reason. Usage is accumulated into u.
func (c *Client) complete(ctx context.Context, req Request, name string, sch *compiledSchema, msgs []openai.ChatCompletionMessage, u *Usage) (string, string, error) {
	cr := openai.ChatCompletionRequest{
		Model:    req.Model,
		Messages: msgs,
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   name,
				Schema: sch.raw,
				Strict: true,
			},
		},
	}
	if isReasoningModel(req.Model) {
		cr.MaxCompletionTokens = req.MaxTokens
	} else {
		// max_tokens, deprecated by OpenAI for max_completion_tokens, is the
		// one the other OpenAI-compatible servers (Ollama, vLLM, Azure's
		// older API versions) understand.
		//lint:ignore SA1019 kept on purpose for compatible servers (above)
		cr.MaxTokens = req.MaxTokens //nolint:staticcheck // kept on purpose for compatible servers (above)
		cr.Temperature = req.Temperature
	}

	b := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(time.Second),
		backoff.WithMaxInterval(30*time.Second),
		backoff.WithMaxElapsedTime(0),
	)
	for attempt := 0; ; attempt++ {
		if c.limiter != nil {
			if err := c.limiter.Wait(ctx); err != nil {
				return "", "", fmt.Errorf("llm: waiting for rate limiter: %w", err)
			}
		}
		meta := &respMeta{}
		callCtx, cancel := context.WithTimeout(withMeta(ctx, meta), c.timeout)
		resp, err := c.api.CreateChatCompletion(callCtx, cr)
		cancel()
		if meta.sent {
			u.Calls++
		}
		if err == nil {
			c.account(u, req.Model, resp)
			return c.reply(resp)
		}
		retry, cerr := c.classify(ctx, err)
		if !retry || attempt >= c.maxRetries {
			if retry {
				c.log.InfoContext(ctx, "llm: giving up after retries", "model", req.Model, "calls", attempt+1, "err", cerr)
			}
			return "", "", cerr
		}
		d := b.NextBackOff()
		if ra, ok := meta.retryAfter(c.clock.Now()); ok {
			d = ra
		}
		c.log.DebugContext(ctx, "llm: retrying", "model", req.Model, "attempt", attempt+1, "wait", d, "err", cerr)
		if req.OnRetry != nil {
			req.OnRetry(Retry{N: attempt + 1, Max: c.maxRetries, Wait: d, Cause: cerr})
		}
		if err := clockwait.Sleep(ctx, c.clock, d, "llm", "retry"); err != nil {
			return "", "", fmt.Errorf("llm: gave up waiting to retry (%w): %w", cerr, err)
		}
	}
}

// reply extracts the content of a successful response.
func (c *Client) reply(resp openai.ChatCompletionResponse) (string, string, error) {
	if len(resp.Choices) == 0 {
		return "", "", &APIError{StatusCode: http.StatusOK, Message: "response has no choices"}
	}
	ch := resp.Choices[0]
	if ch.Message.Refusal != "" {
		return "", string(ch.FinishReason), &RefusalError{Message: ch.Message.Refusal}
	}
	if ch.FinishReason == openai.FinishReasonContentFilter {
		return "", string(ch.FinishReason), &RefusalError{Message: "the reply was withheld by the provider's content filter"}
	}
	return ch.Message.Content, string(ch.FinishReason), nil
}

// classify turns an error from go-openai into this package's error and says
// whether it is worth retrying.
func (c *Client) classify(ctx context.Context, err error) (bool, error) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, fmt.Errorf("llm: %w", ctxErr)
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status := 0
	ae := &APIError{}
	switch {
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
		if errors.As(reqErr.Err, &apiErr) {
			fillFromOpenAI(ae, apiErr)
		} else {
			body := strings.TrimSpace(string(reqErr.Body))
			if len(body) > 200 {
				body = body[:200] + "…"
			}
			ae.Message = body
		}
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
		fillFromOpenAI(ae, apiErr)
	case errors.Is(err, context.DeadlineExceeded):
		return true, fmt.Errorf("llm: request timed out after %s: %w", c.timeout, context.DeadlineExceeded)
	default:
		var netErr net.Error
		if errors.As(err, &netErr) {
			return true, fmt.Errorf("%w: %s", ErrUnreachable, redact(err.Error(), c.apiKey))
		}
		return false, fmt.Errorf("llm: %s", redact(err.Error(), c.apiKey))
	}
	ae.StatusCode = status
	ae.Message = redact(ae.Message, c.apiKey)
	switch {
	case isContextLength(ae):
		ae.kind = ErrContextLength
		return false, ae
	case ae.Code == "insufficient_quota" || ae.Type == "insufficient_quota" ||
		strings.HasPrefix(ae.Code, "billing_") || status == http.StatusPaymentRequired:
		ae.kind = ErrQuota
		return false, ae
	}
	retry := status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
	return retry, ae
}

// isContextLength reports whether the provider rejected the input as too
// long: OpenAI's code, or the wording OpenAI-compatible servers (vLLM, LM
// Studio, Azure) use on a 400, or a 413.
func isContextLength(ae *APIError) bool {
	if ae.Code == "context_length_exceeded" || ae.StatusCode == http.StatusRequestEntityTooLarge {
		return true
	}
	if ae.StatusCode != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(ae.Message)
	for _, phrase := range []string{"maximum context length", "context length exceeded", "context_length_exceeded", "exceeds the context window", "context window exceeded"} {
		if strings.Contains(msg, phrase) {
			return true
		}
	}
	return false
}

func fillFromOpenAI(ae *APIError, e *openai.APIError) {
	ae.Message = e.Message
	ae.Type = e.Type
	switch code := e.Code.(type) {
	case nil:
	case string:
		ae.Code = code
	default:
		ae.Code = fmt.Sprint(code)
	}
}
