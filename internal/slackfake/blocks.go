package slackfake

import (
	"encoding/json"
	"fmt"
)

// Slack's documented Block Kit limits that the fake enforces.
const (
	maxMessageText   = 40000
	maxMessageBlocks = 50
	maxViewBlocks    = 100
	maxSectionText   = 3000
	maxHeaderText    = 150
	maxButtonText    = 75
	maxButtonValue   = 2000
	maxIDLength      = 255
	// maxContextActions bounds the elements of a context_actions block;
	// maxFeedbackLabel an accessibility_label of a feedback button.
	maxContextActions = 5
	maxFeedbackLabel  = 75
	// maxMarkdownText is the limit of all markdown blocks of one payload together.
	maxMarkdownText = 12000
)

// validateBlocks checks a blocks array against the Block Kit rules Slack
// enforces most often, returning "[ERROR] ..." messages like Slack's
// response_metadata. It is deliberately partial: it catches the mistakes a
// bot makes (oversized text, duplicate ids, missing types), not every rule.
func validateBlocks(raw []byte, maxBlocks int) []string {
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return []string{"[ERROR] blocks must be an array of objects"}
	}
	var probs []string
	add := func(i int, format string, args ...any) {
		probs = append(probs, fmt.Sprintf("[ERROR] "+format+" [json-pointer:/blocks/%d]", append(args, i)...))
	}
	if len(blocks) > maxBlocks {
		probs = append(probs, fmt.Sprintf("[ERROR] no more than %d items allowed [json-pointer:/blocks]", maxBlocks))
	}
	blockIDs := map[string]bool{}
	markdown := 0
	for i, b := range blocks {
		typ, _ := b["type"].(string)
		if typ == "" {
			add(i, "missing required field: type")
			continue
		}
		if id, ok := b["block_id"].(string); ok {
			if len(id) > maxIDLength {
				add(i, "block_id must be at most %d characters", maxIDLength)
			}
			if blockIDs[id] {
				add(i, "duplicate block_id %q", id)
			}
			blockIDs[id] = true
		}
		switch typ {
		case "section":
			if t := textOf(b["text"]); len([]rune(t)) > maxSectionText {
				add(i, "section text must be at most %d characters", maxSectionText)
			}
			if b["text"] == nil && b["fields"] == nil {
				add(i, "section needs text or fields")
			}
		case "markdown":
			t, _ := b["text"].(string)
			if t == "" {
				add(i, "markdown block needs text")
			}
			if markdown += len([]rune(t)); markdown > maxMarkdownText {
				add(i, "markdown blocks of one message must have at most %d characters together", maxMarkdownText)
			}
		case "header":
			if t := textOf(b["text"]); t == "" || len([]rune(t)) > maxHeaderText {
				add(i, "header text must be 1..%d characters", maxHeaderText)
			}
		case "actions":
			elems, _ := b["elements"].([]any)
			if len(elems) == 0 || len(elems) > 25 {
				add(i, "actions block needs 1..25 elements")
			}
		case "context_actions":
			for _, p := range validateContextActions(b) {
				add(i, "%s", p)
			}
		}
		actionIDs := map[string]bool{}
		walkElements(b, func(el map[string]any) {
			id, _ := el["action_id"].(string)
			if len(id) > maxIDLength {
				add(i, "action_id must be at most %d characters", maxIDLength)
			}
			if id != "" && actionIDs[id] {
				add(i, "duplicate action_id %q", id)
			}
			actionIDs[id] = true
			if el["type"] == "button" {
				if t := textOf(el["text"]); t == "" || len([]rune(t)) > maxButtonText {
					add(i, "button text must be 1..%d characters", maxButtonText)
				}
				if v, _ := el["value"].(string); len(v) > maxButtonValue {
					add(i, "button value must be at most %d characters", maxButtonValue)
				}
			}
		})
	}
	return probs
}

// validateContextActions checks a context_actions block: 1..5 elements,
// each a feedback_buttons or icon_button element, and each feedback
// button's required plain_text text (1..75), value (1..2000) and optional
// accessibility_label (at most 75), as Slack documents them.
func validateContextActions(b map[string]any) []string {
	var probs []string
	elems, _ := b["elements"].([]any)
	if len(elems) == 0 || len(elems) > maxContextActions {
		probs = append(probs, fmt.Sprintf("context_actions block needs 1..%d elements", maxContextActions))
	}
	for _, e := range elems {
		el, _ := e.(map[string]any)
		switch el["type"] {
		case "feedback_buttons":
			for _, side := range []string{"positive_button", "negative_button"} {
				btn, ok := el[side].(map[string]any)
				if !ok {
					probs = append(probs, "feedback_buttons missing required field: "+side)
					continue
				}
				text, _ := btn["text"].(map[string]any)
				if t := textOf(btn["text"]); text["type"] != "plain_text" || t == "" || len([]rune(t)) > maxButtonText {
					probs = append(probs, fmt.Sprintf("%s text must be plain_text of 1..%d characters", side, maxButtonText))
				}
				if v, _ := btn["value"].(string); v == "" || len([]rune(v)) > maxButtonValue {
					probs = append(probs, fmt.Sprintf("%s value must be 1..%d characters", side, maxButtonValue))
				}
				if l, _ := btn["accessibility_label"].(string); len([]rune(l)) > maxFeedbackLabel {
					probs = append(probs, fmt.Sprintf("%s accessibility_label must be at most %d characters", side, maxFeedbackLabel))
				}
			}
		case "icon_button":
		default:
			probs = append(probs, fmt.Sprintf("context_actions cannot hold a %v element", el["type"]))
		}
	}
	return probs
}

func textOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["text"].(string)
	return s
}

// walkElements calls fn for every interactive element (an object with an
// action_id, or a button) nested anywhere in v.
func walkElements(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["action_id"]; ok || x["type"] == "button" {
			fn(x)
		}
		for k, child := range x {
			if k == "text" || k == "placeholder" || k == "label" {
				continue
			}
			walkElements(child, fn)
		}
	case []any:
		for _, child := range x {
			walkElements(child, fn)
		}
	}
}

// findAction finds the element with actionID (inside the block with blockID
// when blockID is not empty). It returns the element and its block's id.
func findAction(raw json.RawMessage, actionID, blockID string) (map[string]any, string, bool) {
	var blocks []map[string]any
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, "", false
	}
	for _, b := range blocks {
		bid, _ := b["block_id"].(string)
		if blockID != "" && bid != blockID {
			continue
		}
		var found map[string]any
		walkElements(b, func(el map[string]any) {
			if found == nil && el["action_id"] == actionID {
				found = el
			}
		})
		if found != nil {
			return found, bid, true
		}
	}
	return nil, "", false
}

// inputElementTypes maps block_id → action_id → element type for the input
// blocks of a view document.
func inputElementTypes(doc map[string]any) map[string]map[string]string {
	out := map[string]map[string]string{}
	blocks, _ := doc["blocks"].([]any)
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if m["type"] != "input" {
			continue
		}
		bid, _ := m["block_id"].(string)
		el, _ := m["element"].(map[string]any)
		aid, _ := el["action_id"].(string)
		typ, _ := el["type"].(string)
		if bid == "" || aid == "" {
			continue
		}
		if out[bid] == nil {
			out[bid] = map[string]string{}
		}
		out[bid][aid] = typ
	}
	return out
}

// compact removes zero values ("" , 0, false, null, empty objects/arrays)
// from decoded JSON, so a marshalled slack.BlockAction looks like the sparse
// objects Slack sends.
func compact(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if c, keep := compact(child); keep {
				x[k] = c
			} else {
				delete(x, k)
			}
		}
		return x, len(x) > 0
	case []any:
		out := x[:0]
		for _, child := range x {
			if c, keep := compact(child); keep {
				out = append(out, c)
			}
		}
		return out, len(out) > 0
	case string:
		return x, x != ""
	case float64:
		return x, x != 0
	case bool:
		return x, x
	case nil:
		return nil, false
	}
	return v, true
}
