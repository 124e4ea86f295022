package bot

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// t0 is the fixed clock of the fixtures.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

func ptrf(f float64) *float64 { return &f }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// builtin returns a built-in definition by id.
func builtin(id string) checkpoints.Definition {
	for _, d := range checkpoints.Builtins(t0) {
		if d.ID == id {
			return d
		}
	}
	panic("no builtin " + id)
}

// instanceOf makes an offered instance of a built-in definition.
func instanceOf(defID, id string, payload any, values map[string]any) *checkpoints.Instance {
	d := builtin(defID)
	return &checkpoints.Instance{
		ID: id, RunID: "run-42", DefinitionID: d.ID, ControlType: d.ControlType, Label: d.Label,
		Required: d.Required, Fields: d.Fields, Actions: d.Actions, State: checkpoints.StateOffered,
		Payload: mustJSON(payload), Values: values, Attempt: 1, MaxRetries: d.MaxRetries, Timeout: d.Timeout,
		CreatedAt: t0, OfferedAt: t0, DeadlineAt: t0.Add(d.Timeout),
	}
}

func planPayload() pipeline.PlanPayload {
	return pipeline.PlanPayload{
		Question: "How do retrieval-augmented generation systems handle <!channel> stale sources?",
		SubQuestions: []string{
			"What causes staleness in RAG indexes?",
			"Which re-indexing strategies exist & how do they compare?",
			"How do systems detect outdated <@U999> passages at query time?",
		},
		Queries: []pipeline.QueryView{
			{Text: "RAG index staleness", Kind: "web"},
			{Text: "incremental re-indexing vector database", Kind: "academic"},
			{Text: "retrieval freshness 2025", Kind: "news"},
		},
		Sections:    []string{"Background", "Causes", "Strategies", "Detection"},
		Methodology: "Survey recent papers and engineering blogs; compare strategies.",
		Warnings:    []string{"Few sources after 2025 may exist."},
		Estimate:    pipeline.Estimate{LLMCalls: 14, Tokens: 120000, CostUSD: 0.42, Duration: 4*time.Minute + 30*time.Second, Searches: 3, PagesToRead: 12},
		Round:       1,
	}
}

func planInstance() *checkpoints.Instance {
	return instanceOf(checkpoints.PlanReview, "run-42.cp-1", planPayload(), map[string]any{
		"sub_questions": "What causes staleness in RAG indexes?\nWhich re-indexing strategies exist?",
		"queries":       "web: RAG index staleness\nacademic: incremental re-indexing vector database",
		"sections":      "Background\nCauses",
		"depth":         "standard",
	})
}

func sourcesInstance() *checkpoints.Instance {
	p := pipeline.SourcesPayload{Question: "How do RAG systems handle stale sources?", Total: 37, ToFetch: 2,
		Sources: []pipeline.SourceView{
			{ID: 1, Title: "Keeping RAG fresh", URL: "https://blog.example.com/rag-fresh", Domain: "blog.example.com", Published: t0.AddDate(0, -2, 0), Gist: "Argues for incremental indexing with TTLs.", Score: 0.91, Kind: "web", Selected: true},
			{ID: 2, Title: "<https://evil.example|Click here> for free tokens", URL: "https://evil.example/x", Domain: "evil.example", Gist: "<!here> spam", Score: 0.4, Kind: "web"},
			{ID: 3, Title: "Temporal drift in dense retrieval", URL: "https://arxiv.org/abs/2501.00001", Domain: "arxiv.org", Published: t0.AddDate(0, -5, 0), Gist: "Measures how retrieval quality decays.", Score: 0.88, Kind: "academic", Relevant: true},
		},
		Errors: []string{"semantic_scholar: timeout"},
	}
	inst := instanceOf(checkpoints.SourceReview, "run-42.cp-2", p, nil)
	for i := range inst.Fields {
		if inst.Fields[i].RuntimeOptions {
			inst.Fields[i].Options = []checkpoints.Option{{Value: "1", Label: "Keeping RAG fresh"}, {Value: "2", Label: "Click here"}, {Value: "3", Label: "Temporal drift in dense retrieval"}}
		}
	}
	inst.Values = map[string]any{"relevant": []string{"3"}}
	return inst
}

func draftInstance() *checkpoints.Instance {
	p := pipeline.DraftPayload{Version: 2, Title: "Stale sources in RAG", Abstract: "RAG systems degrade as sources age. We survey causes & fixes.",
		Sections: []string{"Background", "Causes", "Strategies"}, WordCount: 2345, Score: 8.1, Recommendation: "approve",
		Summary: "Solid coverage; cite more 2025 work.", Major: 0, Minor: 3, Sources: 9, Markdown: "# Stale sources in RAG\n\nBody <!channel> text & more.",
		Claims: pipeline.ClaimSummary{Checked: true, ClaimTally: pipeline.ClaimTally{Total: 14, Verified: 12, Unsupported: 2}, Unsupported: []pipeline.ClaimView{
			{Location: "Causes", Sentence: "Indexes go stale within 30 days <!here> [3].", SourceID: 3, Source: "Temporal drift in dense retrieval", Quote: "most indexes are stale after a month", Reason: "the quote was not found in the cited source (at best 43% of its words match)"},
			{Location: "Strategies", Sentence: "TTL-based refresh halves stale answers [1].", SourceID: 1, Source: "Keeping RAG fresh", Reason: "no supporting quote was given"},
		}},
		Diff: &pipeline.DraftDiff{From: 1, To: 2, Added: []string{"Strategies"}, Changed: []pipeline.SectionChange{{Title: "Causes", Share: 0.62, Rewritten: true}, {Title: "Abstract", Share: 0.1}},
			ClaimsAdded: []string{"TTL-based refresh halves stale answers [1]."}, ClaimsDropped: []string{"All indexes rot [2].", "Nobody re-indexes [4]."},
			Addressed: []pipeline.RevisionItem{{N: 1, By: "reviewer", Severity: "major", Text: "Causes lacks evidence."}}, Open: []pipeline.RevisionItem{{N: 2, By: "reviewer", Severity: "minor", Text: "Wordy."}},
			UnsupportedFixed: 2},
		Disagreements: []pipeline.DisagreementView{{N: 1, Topic: "How fast indexes go stale",
			A:          pipeline.SideView{Claim: "Within weeks for news corpora", Sources: []pipeline.SourceRef{{ID: 3, Title: "Temporal drift in dense retrieval", Domain: "arxiv.org"}}},
			B:          pipeline.SideView{Claim: "Months <@U999> for reference corpora", Sources: []pipeline.SourceRef{{ID: 1, Title: "Keeping RAG fresh", Domain: "blog.example.com"}}},
			Assessment: "Both hold; they measure different corpora."}},
		Coverage: []pipeline.Coverage{
			{Question: "What causes staleness in RAG indexes?", Status: pipeline.CoverageAnswered, Sources: []int{1, 3}},
			{Question: "Which re-indexing strategies exist?", Status: pipeline.CoveragePartly, Sources: []int{1}},
			{Question: "How do systems detect outdated passages?", Status: pipeline.CoverageUnanswered},
		},
	}
	inst := instanceOf(checkpoints.DraftReview, "run-42.cp-4", p, map[string]any{"title": "Stale sources in RAG"})
	for i := range inst.Fields {
		if inst.Fields[i].RuntimeOptions {
			inst.Fields[i].Options = []checkpoints.Option{{Value: "1a", Label: "1A · Within weeks for news corpora"}, {Value: "1b", Label: "1B · Months for reference corpora"}}
		}
	}
	return inst
}

func criticalInstance() *checkpoints.Instance {
	p := pipeline.CriticalPayload{Version: 1, Title: "Stale sources in RAG", Score: 4.2, Items: []pipeline.CritiqueItem{
		{Category: "citation", Severity: "critical", Location: "Section 2", Description: "Claim about 40% decay has no source.", SuggestedFix: "Cite [3] or remove."},
		{Category: "accuracy", Severity: "major", Description: "Confuses TTL with <!channel> cache eviction.", SuggestedFix: "Explain both."},
	}}
	return instanceOf(checkpoints.CriticalIssues, "run-42.cp-3", p, nil)
}

// allTypesInstance has one field of each of the nine types (and the
// variants without options).
func allTypesInstance() *checkpoints.Instance {
	opts := []checkpoints.Option{{Value: "a", Label: "Alpha"}, {Value: "b", Label: "Beta"}, {Value: "c", Label: "Gamma"}}
	fields := []checkpoints.Field{
		{Key: "title", Type: checkpoints.FieldText, Label: "Title", Required: true, MaxLength: 100, Placeholder: "A title"},
		{Key: "notes", Type: checkpoints.FieldTextarea, Label: "Notes", Help: "Anything else"},
		{Key: "depth", Type: checkpoints.FieldSelect, Label: "Depth", Options: opts},
		{Key: "topics", Type: checkpoints.FieldMultiSelect, Label: "Topics", Options: opts},
		{Key: "flags", Type: checkpoints.FieldCheckbox, Label: "Flags", Options: opts},
		{Key: "agree", Type: checkpoints.FieldCheckbox, Label: "I agree"},
		{Key: "tone", Type: checkpoints.FieldRadio, Label: "Tone", Options: opts},
		{Key: "count", Type: checkpoints.FieldNumber, Label: "Count", Min: ptrf(1), Max: ptrf(50)},
		{Key: "ratio", Type: checkpoints.FieldRange, Label: "Ratio", Min: ptrf(0), Max: ptrf(1)},
		{Key: "tags", Type: checkpoints.FieldChips, Label: "Tags"},
		{Key: "labels", Type: checkpoints.FieldChips, Label: "Labels", Options: opts},
	}
	return &checkpoints.Instance{
		ID: "run-7.cp-9", RunID: "run-7", DefinitionID: "custom_review", ControlType: "custom_review", Label: "Custom review",
		Fields: fields, Actions: []checkpoints.Action{checkpoints.Approve, checkpoints.Edit}, State: checkpoints.StateOffered, Attempt: 1,
		Values: map[string]any{
			"title": "Hello", "notes": "line 1\nline 2", "depth": "b", "topics": []string{"a", "c"},
			"flags": []string{"b"}, "agree": true, "tone": "c", "count": 7.0, "ratio": 0.25,
			"tags": []string{"rag", "search"}, "labels": []string{"a"},
		},
	}
}

// decided returns a copy of inst decided with action by U123 at t0+1h.
func decided(inst *checkpoints.Instance, action checkpoints.Action, note string, changes []checkpoints.Change) *checkpoints.Instance {
	c := *inst
	at := t0.Add(time.Hour)
	c.State = checkpoints.StateCollapsed
	c.Decision = &checkpoints.Decision{Action: action, By: "U123", At: at, Note: note}
	c.DecidedAt = at
	c.Audit = []checkpoints.AuditEntry{
		{At: t0, Actor: "system", From: checkpoints.StatePending, To: checkpoints.StateOffered},
		{At: at, Actor: "U123", From: checkpoints.StateOffered, To: checkpoints.StateSubmitted, Note: string(action), Changes: changes},
		{At: at, Actor: "system", From: checkpoints.StateSubmitted, To: checkpoints.StateCollapsed, Note: "applied"},
	}
	return &c
}

// sampleRun is a run in the middle of fetching.
func sampleRun() *pipeline.Run {
	return &pipeline.Run{
		ID: "run-42", Question: "How do RAG systems handle stale sources?", Mode: "guided", Depth: pipeline.DepthStandard,
		RequestedBy: "U123", Origin: pipeline.Origin{Kind: "slack", Channel: "C1", ThreadTS: "100.000001"},
		Status: pipeline.StatusRunning, Step: pipeline.StepFetch, CreatedAt: t0, Active: 95 * time.Second,
		Queries: make([]pipeline.Query, 6), Sources: []pipeline.Source{{ID: 1, Fetched: true}, {ID: 2, Fetched: true}, {ID: 3}},
		Pages: make([]pipeline.Page, 2), Spend: pipeline.Spend{CostUSD: 0.137}, Limits: pipeline.Limits{MaxCostUSD: 2},
	}
}

// finishedRun is a completed run with a report.
func finishedRun() *pipeline.Run {
	r := sampleRun()
	r.Status, r.Step, r.FinishedAt = pipeline.StatusCompleted, pipeline.StepDone, t0.Add(7*time.Minute)
	r.Report = &pipeline.Report{
		Status: "complete", Confidence: "high", Title: "Stale sources in RAG <!channel>",
		Abstract:   "RAG systems degrade as sources age. One page said <!channel> and <https://evil.example|click here>; neither is a link here.",
		Conclusion: "Incremental indexing with freshness signals works best.",
		Sections: []pipeline.Section{
			{Title: "Causes", Content: "Indexes age [1]. A page said <!channel> see <http://evil.example|your bank> & more."},
			{Title: "Strategies", Content: "Re-index incrementally [2]."},
		},
		References: []pipeline.Reference{
			{N: 1, SourceID: 1, Title: "Keeping RAG fresh", URL: "https://blog.example.com/rag-fresh", Domain: "blog.example.com", Published: t0.AddDate(0, -2, 0)},
			{N: 2, SourceID: 3, Title: "Temporal drift | in dense retrieval", URL: "https://arxiv.org/abs/2501.00001", Domain: "arxiv.org"},
		},
		Metadata: pipeline.Metadata{RunID: "run-42", SourcesUsed: 2, WordCount: 2345, FinalScore: 8.1, CostUSD: 0.61},
		Markdown: "# Stale sources in RAG\n\nFull text.",
	}
	return r
}

// rawJSON is v as JSON without HTML escaping, so "<" reads as "<".
func rawJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}
