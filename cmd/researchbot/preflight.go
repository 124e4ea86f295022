package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/llm"
)

// preflightTimeout bounds the start-up checks: a dependency that does not
// answer in this time is reported as not answering.
const preflightTimeout = 15 * time.Second

// dependencies says which of the program's dependencies a command checks
// at start, besides Redis (which opening the App checks).
type dependencies struct {
	slackBot bool // SLACK_BOT_TOKEN with auth.test
	slackApp bool // SLACK_APP_TOKEN with apps.connections.open (serve)
	llm      bool // the model endpoint's /models, unless LLM_STARTUP_CHECK=false
}

// openChecked opens the App (connecting to Redis) while it asks Slack and
// the model endpoint, all at once, whether they answer and accept the
// credentials. Every problem is one line of the exit message, naming the
// variable to fix; nothing is left open when there is one.
func openChecked(ctx context.Context, cfg config.Config, deps dependencies, opts app.Options) (*app.App, error) {
	checkCtx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	var (
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
	)
	add := func(errs ...error) {
		mu.Lock()
		defer mu.Unlock()
		for _, err := range errs {
			problems = append(problems, err.Error())
		}
	}
	client := &http.Client{Timeout: preflightTimeout}
	if deps.slackBot || deps.slackApp {
		tc := bot.TokenCheck{APIURL: cfg.SlackAPIURL, BotToken: cfg.SlackBotToken, HTTPClient: client}
		if deps.slackApp {
			tc.AppToken = cfg.SlackAppToken
		}
		wg.Go(func() { add(bot.CheckTokens(checkCtx, tc)...) })
	}
	if deps.llm && cfg.LLMStartupCheck {
		wg.Go(func() {
			if err := checkModel(checkCtx, cfg, client); err != nil {
				add(err)
			}
		})
	}
	a, err := app.New(ctx, cfg, opts)
	switch {
	case err == nil:
	case strings.Contains(err.Error(), "REDIS_URL"):
		add(fmt.Errorf("REDIS_URL: %w", err))
	default:
		add(err)
	}
	wg.Wait()
	if len(problems) == 0 {
		return a, nil
	}
	if a != nil {
		_ = a.Close()
	}
	sort.Strings(problems)
	msg := "researchbot: cannot start; fix these and start again:"
	for _, p := range problems {
		msg += "\n  - " + p
	}
	return nil, &exitError{code: 1, msg: msg}
}

// checkModel asks the model endpoint for its models and words a failure
// with the variable to fix.
func checkModel(ctx context.Context, cfg config.Config, hc *http.Client) error {
	c, err := llm.New(llm.Config{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Timeout: cfg.LLMTimeout, HTTPClient: hc})
	if err != nil {
		return fmt.Errorf("OPENAI_BASE_URL: %w", err)
	}
	err = c.Check(ctx)
	if err == nil {
		return nil
	}
	const skip = " (LLM_STARTUP_CHECK=false skips this check)"
	what := app.DescribeModelFailure(cfg.OpenAIBaseURL, err)
	var api *llm.APIError
	switch {
	case errors.As(err, &api) && (api.StatusCode == http.StatusUnauthorized || api.StatusCode == http.StatusForbidden):
		return fmt.Errorf("OPENAI_API_KEY: %s: set the key this endpoint accepts", what)
	case errors.As(err, &api) && api.StatusCode == http.StatusNotFound:
		return fmt.Errorf("OPENAI_BASE_URL: %s to GET /models: give the API's base URL (usually ending in /v1)%s", what, skip)
	case errors.Is(err, llm.ErrUnreachable), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("OPENAI_BASE_URL: %s: start the server, or correct OPENAI_BASE_URL%s", what, skip)
	}
	return fmt.Errorf("OPENAI_BASE_URL: %s%s", what, skip)
}
