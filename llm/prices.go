package llm

// What calls cost: the price table and the accounting of tokens and cost
// into a Usage.

import (
	"cmp"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Price is what a model costs, in USD per million tokens.
type Price struct{ InputPerMTok, OutputPerMTok float64 }

// DefaultPrices returns list prices (USD per million tokens, standard tier) of
// common OpenAI models. Dated snapshots such as "gpt-4o-2024-08-06" are priced
// by their base name. Operators can override or extend the table via
// Config.Prices.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		"gpt-4o":       {2.50, 10.00},
		"gpt-4o-mini":  {0.15, 0.60},
		"gpt-4.1":      {2.00, 8.00},
		"gpt-4.1-mini": {0.40, 1.60},
		"gpt-4.1-nano": {0.10, 0.40},
		"o1":           {15.00, 60.00},
		"o3":           {2.00, 8.00},
		"o3-mini":      {1.10, 4.40},
		"o4-mini":      {1.10, 4.40},
		"gpt-5":        {1.25, 10.00},
		"gpt-5-mini":   {0.25, 2.00},
		"gpt-5-nano":   {0.05, 0.40},
		"gpt-5.1":      {1.25, 10.00},
	}
}

// account adds the tokens and cost of one successful response to u.
func (c *Client) account(u *Usage, requested string, resp openai.ChatCompletionResponse) {
	model := resp.Model
	model = cmp.Or(model, requested)
	u.Model = model
	u.PromptTokens += resp.Usage.PromptTokens
	u.CompletionTokens += resp.Usage.CompletionTokens
	p, ok := c.priceOf(model)
	if !ok {
		p, ok = c.priceOf(requested)
	}
	if !ok {
		u.UnknownPrice = true
		return
	}
	u.CostUSD += float64(resp.Usage.PromptTokens)*p.InputPerMTok/1e6 + float64(resp.Usage.CompletionTokens)*p.OutputPerMTok/1e6
}

// priceOf finds the price of model: an exact entry, else the longest entry
// that model extends with "-…" (a dated snapshot such as gpt-4o-2024-08-06).
func (c *Client) priceOf(model string) (Price, bool) {
	if p, ok := c.prices[model]; ok {
		return p, true
	}
	best, found := "", false
	var price Price
	for name, p := range c.prices {
		if strings.HasPrefix(model, name+"-") && len(name) > len(best) {
			best, price, found = name, p, true
		}
	}
	return price, found
}
