package bot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// blockProblems checks rendered blocks against Block Kit's limits and for
// smuggled mentions or links, walking their JSON like Slack would.
func blockProblems(blocks []slack.Block, maxBlocks int) []string {
	var probs []string
	add := func(f string, a ...any) { probs = append(probs, fmt.Sprintf(f, a...)) }
	if len(blocks) > maxBlocks {
		add("%d blocks > %d", len(blocks), maxBlocks)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blocks); err != nil {
		return []string{err.Error()}
	}
	// Decoded once: the walks below only read it.
	var all []any
	if err := json.Unmarshal(buf.Bytes(), &all); err != nil {
		return []string{err.Error()}
	}
	doc := make([]map[string]any, len(all))
	for i, b := range all {
		doc[i], _ = b.(map[string]any)
	}
	ids := map[string]bool{}
	runes := func(v any) int { s, _ := v.(string); return utf8.RuneCountInString(s) }
	textOf := func(v any) string {
		m, _ := v.(map[string]any)
		s, _ := m["text"].(string)
		return s
	}
	for i, b := range doc {
		if id, _ := b["block_id"].(string); id != "" {
			if ids[id] {
				add("block %d: duplicate block_id %q", i, id)
			}
			ids[id] = true
			if len(id) > blockkit.MaxActionID {
				add("block %d: block_id too long", i)
			}
		}
		switch b["type"] {
		case "section":
			if n := runes(textOf(b["text"])); n > blockkit.MaxSectionText || n == 0 {
				add("block %d: section text has %d runes", i, n)
			}
		case "header":
			if n := runes(textOf(b["text"])); n > blockkit.MaxHeaderText {
				add("block %d: header has %d runes", i, n)
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) > 10 || len(els) == 0 {
				add("block %d: context has %d elements", i, len(els))
			}
			for _, e := range els {
				if n := runes(textOf(e)); n > 3000 {
					add("block %d: context text has %d runes", i, n)
				}
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) > 25 {
				add("block %d: %d actions", i, len(els))
			}
			for _, e := range els {
				m := e.(map[string]any)
				if n := runes(m["value"]); n > blockkit.MaxButtonValue {
					add("block %d: button value has %d runes", i, n)
				}
				if n := runes(textOf(m["text"])); n > blockkit.MaxButtonText {
					add("block %d: button text has %d runes", i, n)
				}
				if n := runes(m["action_id"]); n > blockkit.MaxActionID {
					add("block %d: action_id too long", i)
				}
			}
		case "input":
			if n := runes(textOf(b["label"])); n > blockkit.MaxInputLabel || n == 0 {
				add("block %d: input label has %d runes", i, n)
			}
			el, _ := b["element"].(map[string]any)
			opts, _ := el["options"].([]any)
			limit := blockkit.MaxOptions
			if el["type"] == "checkboxes" || el["type"] == "radio_buttons" {
				limit = blockkit.MaxChoiceOptions
			}
			if len(opts) > limit {
				add("block %d: %d options", i, len(opts))
			}
			for _, o := range opts {
				m := o.(map[string]any)
				if n := runes(textOf(m["text"])); n > blockkit.MaxOptionText {
					add("block %d: option text has %d runes", i, n)
				}
				if n := runes(m["value"]); n > blockkit.MaxOptionValue {
					add("block %d: option value has %d runes", i, n)
				}
			}
			if n := runes(textOf(el["placeholder"])); n > blockkit.MaxPlaceholder {
				add("block %d: placeholder has %d runes", i, n)
			}
			if ml, ok := el["max_length"].(float64); ok && runes(el["initial_value"]) > int(ml) {
				add("block %d: initial value longer than max_length", i)
			}
			if ml, ok := el["max_length"].(float64); ok && ml > blockkit.MaxInputLength {
				add("block %d: max_length %v > %d", i, ml, blockkit.MaxInputLength)
			}
		}
	}
	// Every mrkdwn text object is verbatim, so Slack auto-parses nothing
	// (bare @here, #channel, URLs) in it.
	markdown := 0
	walkObjects(all, func(m map[string]any) {
		if m["type"] == "mrkdwn" && m["verbatim"] != true {
			add("mrkdwn text object without verbatim: %.80q", m["text"])
		}
		if t, ok := m["text"].(string); ok && m["type"] == "markdown" {
			markdown += utf8.RuneCountInString(t)
		}
	})
	if markdown > blockkit.MaxMarkdownBlockText {
		add("markdown blocks have %d characters together, more than %d", markdown, blockkit.MaxMarkdownBlockText)
	}
	// Untrusted text must never become a mention, a broadcast or a masked
	// link: only the links and mentions this package builds may appear in
	// displayed text (form values a person edits are not displayed text).
	walkTexts(all, func(s string) {
		if !strings.ContainsAny(s, "<>") {
			return // escaped text: the markup checks below cannot find anything
		}
		if rest := quoteMarks.ReplaceAllString(allowedMarkup.ReplaceAllString(s, ""), ""); strings.ContainsAny(rest, "<>") {
			add("raw < or > outside the markup this package builds: %.120q", rest)
		}
		for _, bad := range []string{"<!channel", "<!here", "<!everyone", "<@U999", "<https://evil.example|"} {
			if strings.Contains(s, bad) {
				add("smuggled %q in %.80q", bad, s)
			}
		}
	})
	return probs
}

// allowedMarkup is the mrkdwn this package itself writes: user mentions,
// dates and http(s) links whose URL has no raw <, > or |.
var allowedMarkup = regexp.MustCompile(`<@[UW][A-Z0-9]+>|<#[CGD][A-Z0-9]+>|<!date\^\d+\^[^|>]*\|[^<>]*>|<https?://[^<>|\s]+\|[^<>]*>`)

// quoteMarks are block quotes (">" starting a line; in a markdown block
// also inside a list item's indentation, or nested).
var quoteMarks = regexp.MustCompile(`(?m)^(?: *>)+`)

// walkObjects calls fn with every JSON object nested in v.
func walkObjects(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, e := range x {
			walkObjects(e, fn)
		}
	case []any:
		for _, e := range x {
			walkObjects(e, fn)
		}
	}
}

// displayedText joins every displayed text of blocks given as JSON.
func displayedText(blocksJSON []byte) string {
	var v any
	_ = json.Unmarshal(blocksJSON, &v)
	var out []string
	walkTexts(v, func(s string) { out = append(out, s) })
	return strings.Join(out, "\n")
}

// walkTexts calls fn with every displayed text (text objects' and
// markdown blocks' "text").
func walkTexts(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		if t, ok := x["text"].(string); ok && (x["type"] == "mrkdwn" || x["type"] == "plain_text" || x["type"] == "markdown") {
			fn(t)
		}
		for k, e := range x {
			if k != "initial_value" {
				walkTexts(e, fn)
			}
		}
	case []any:
		for _, e := range x {
			walkTexts(e, fn)
		}
	}
}

// randText is long random text full of characters Slack cares about.
func randText(rng *sizes, limit int) string {
	pieces := []string{"<!channel>", "<@U999>", "&", "<https://evil.example|x>", "é", "🙂", "word ", "\n", "*", "|", ">", "<", "a"}
	n := rng.Size(limit + 1)
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// sizes draws the sizes of a generated payload: each at its bound (the
// worst case for Block Kit's limits) or at random. What is drawn within a
// size (which characters, which field type) is random either way.
type sizes struct {
	*rand.Rand
	atBound bool
}

// Size returns n-1 when sizes are at their bound, otherwise a random size below n.
func (s *sizes) Size(n int) int {
	if s.atBound {
		return n - 1
	}
	return s.IntN(n)
}

func randList(rng *sizes, n, maxLen int) []string {
	out := make([]string, rng.Size(n+1))
	for i := range out {
		out[i] = randText(rng, maxLen)
	}
	return out
}

// TestRenderingStaysWithinLimits renders long, hostile payloads, every size
// at its bound and then at random, and checks that no message or modal
// ever exceeds Block Kit's limits.
func TestRenderingStaysWithinLimits(t *testing.T) {
	// Three cases: every size at its bound, then two at random.
	for iter := range 3 {
		rng := &sizes{Rand: rand.New(rand.NewPCG(1, uint64(iter))), atBound: iter == 0}
		long := 50 + rng.Size(6000)
		plan := pipeline.PlanPayload{Question: randText(rng, long), SubQuestions: randList(rng, 60, 800), Sections: randList(rng, 40, 300),
			Methodology: randText(rng, long), Warnings: randList(rng, 10, 900), Round: rng.Size(4)}
		for range rng.Size(80) {
			plan.Queries = append(plan.Queries, pipeline.QueryView{Text: randText(rng, 500), Kind: randText(rng, 30)})
		}
		var sources pipeline.SourcesPayload
		sources.Question, sources.Total, sources.ToFetch = randText(rng, long), rng.Size(1000), rng.Size(50)
		for i := range rng.Size(120) {
			sources.Sources = append(sources.Sources, pipeline.SourceView{ID: i, Title: randText(rng, 600), URL: "https://x.example/" + randText(rng, 300),
				Domain: randText(rng, 200), Gist: randText(rng, 900), Published: t0, Score: rng.Float64()})
		}
		sources.Errors = randList(rng, 20, 400)
		draft := pipeline.DraftPayload{Title: randText(rng, 900), Abstract: randText(rng, long), Sections: randList(rng, 80, 300),
			Summary: randText(rng, long), Markdown: randText(rng, 400000)}
		var crit pipeline.CriticalPayload
		crit.Title = randText(rng, 500)
		for range rng.Size(100) {
			crit.Items = append(crit.Items, pipeline.CritiqueItem{Category: randText(rng, 60), Severity: randText(rng, 40), Location: randText(rng, 300), Description: randText(rng, 2000), SuggestedFix: randText(rng, 1000)})
		}
		insts := []*checkpoints.Instance{
			instanceOf(checkpoints.PlanReview, "run.cp-"+randText(rng, 30), plan, map[string]any{"sub_questions": randText(rng, 5000), "depth": "quick"}),
			instanceOf(checkpoints.SourceReview, "run.cp", sources, nil),
			instanceOf(checkpoints.DraftReview, "run.cp", draft, map[string]any{"title": randText(rng, 400)}),
			instanceOf(checkpoints.CriticalIssues, "run.cp", crit, nil),
		}
		for _, inst := range insts {
			inst.Label = randText(rng, 300)
			inst.Attempt = 1 + rng.Size(3)
			for k := range 105 {
				// More fields than a modal has blocks; a few with more
				// options than a menu may have, the rest with a few (the
				// limits are the same, the cost a fraction).
				options := 5
				if k < 3 {
					options = 130
				}
				inst.Fields = append(inst.Fields, checkpoints.Field{Key: fmt.Sprintf("f%d", k), Type: checkpoints.FieldTypes()[rng.IntN(9)], Label: randText(rng, 3000),
					Help: randText(rng, 3000), Placeholder: randText(rng, 400), Options: randOptions(rng, options)})
			}
			check(t, iter, "checkpoint "+inst.DefinitionID, blockkit.RenderCheckpoint(inst, "U123"), blockkit.MaxBlocks)
			inst.Decision = &checkpoints.Decision{Action: checkpoints.Reject, By: randText(rng, 40), At: t0, Note: randText(rng, long)}
			inst.Audit = []checkpoints.AuditEntry{{To: checkpoints.StateSubmitted, Changes: []checkpoints.Change{{Key: randText(rng, 300), Before: randText(rng, 3000), After: randText(rng, 50)}}}}
			check(t, iter, "decided "+inst.DefinitionID, blockkit.RenderDecided(inst), blockkit.MaxBlocks)
			m := blockkit.EditModal(inst)
			check(t, iter, "edit modal "+inst.DefinitionID, m.Blocks.BlockSet, blockkit.MaxModalBlocks)
			if n := utf8.RuneCountInString(m.Title.Text); n > blockkit.MaxModalTitle {
				t.Fatalf("iteration %d: modal title %d runes", iter, n)
			}
			if len(m.PrivateMetadata) > 3000 {
				t.Fatalf("private_metadata too long")
			}
			check(t, iter, "reject modal", blockkit.RejectModal(inst).Blocks.BlockSet, blockkit.MaxModalBlocks)
		}
		r := finishedRun()
		r.Question = randText(rng, 2000)
		r.Report.Title, r.Report.Abstract, r.Report.Conclusion, r.Report.Reason = randText(rng, 900), randText(rng, long), randText(rng, long), randText(rng, 900)
		r.Report.Caveats, r.Bounds = randList(rng, 40, 600), randList(rng, 10, 100)
		r.Report.References = nil
		for i := range rng.Size(200) {
			r.Report.References = append(r.Report.References, pipeline.Reference{N: i + 1, Title: randText(rng, 700), URL: "https://r.example/" + randText(rng, 500), Domain: randText(rng, 100)})
		}
		check(t, iter, "report", blockkit.RenderFinished(r), blockkit.MaxBlocks)
		r.Status, r.Failure = pipeline.StatusFailed, randText(rng, long)
		check(t, iter, "failed", blockkit.RenderFinished(r), blockkit.MaxBlocks)
		check(t, iter, "progress", blockkit.RenderProgress(r, t0.Add(time.Hour)), blockkit.MaxBlocks)
		check(t, iter, "status", blockkit.RenderStatus(r, t0), blockkit.MaxBlocks)
		check(t, iter, "root", blockkit.RenderRoot(blockkit.RootInfo{Question: randText(rng, 8000), RunID: randText(rng, 100), RequestedBy: randText(rng, 20)}), blockkit.MaxBlocks)
		runs := make([]*pipeline.Run, rng.Size(60))
		for i := range runs {
			runs[i] = &pipeline.Run{ID: randText(rng, 80), Question: randText(rng, 2000), CreatedAt: t0}
		}
		check(t, iter, "list", blockkit.RenderList(runs, t0), blockkit.MaxBlocks)
	}
}

func randOptions(rng *sizes, n int) []checkpoints.Option {
	var out []checkpoints.Option
	for i := range rng.Size(n) {
		out = append(out, checkpoints.Option{Value: fmt.Sprintf("%d-%s", i, randText(rng, 300)), Label: randText(rng, 300)})
	}
	return out
}

func check(t *testing.T, iter int, what string, blocks []slack.Block, limit int) {
	t.Helper()
	if probs := blockProblems(blocks, limit); len(probs) > 0 {
		t.Fatalf("iteration %d, %s: %v", iter, what, probs)
	}
}
