package pipeline

// The structured outputs the LLM returns. (Owned by the engine's author: the
// prompt templates in prompts.go describe these same structs to the model.)
// Every field is required and there are no maps, so that each struct can be
// sent as a strict JSON schema.

// PlanOutput is the planner's answer.
type PlanOutput struct {
	Reasoning    string         `json:"reasoning" jsonschema_description:"Short chain-of-thought summary of how the question was decomposed"`
	SubQuestions []string       `json:"sub_questions" jsonschema_description:"3 to 7 atomic sub-questions that together answer the question"`
	Queries      []PlannedQuery `json:"queries" jsonschema_description:"5 to 15 specific search queries"`
	Sections     []string       `json:"sections" jsonschema_description:"Expected report sections mapping to the sub-questions"`
	Methodology  string         `json:"methodology"`
	Warnings     []string       `json:"warnings" jsonschema_description:"Ambiguities or scope concerns; empty if none"`
	Confidence   float64        `json:"confidence" jsonschema:"minimum=0,maximum=1"`
}

// PlannedQuery is one search query of a plan.
type PlannedQuery struct {
	Text        string `json:"text"`
	Kind        string `json:"kind" jsonschema:"enum=web,enum=academic,enum=news"`
	SubQuestion int    `json:"sub_question" jsonschema_description:"1-based index of the sub-question this query serves"`
}

// RankOutput is the ranker's batched relevance judgement.
type RankOutput struct {
	Judgements []Judgement `json:"judgements"`
}

// Judgement is the relevance of one source to the question.
type Judgement struct {
	SourceID  int     `json:"source_id"`
	Relevance float64 `json:"relevance" jsonschema:"minimum=0,maximum=1"`
	Gist      string  `json:"gist" jsonschema_description:"One line: what this source offers for the question"`
}

// AnalysisOutput is the analyst's synthesis.
type AnalysisOutput struct {
	Findings           []FindingOutput `json:"findings"`
	Themes             []string        `json:"themes"`
	Contradictions     []string        `json:"contradictions"`
	Gaps               []string        `json:"gaps"`
	Confidence         float64         `json:"confidence" jsonschema:"minimum=0,maximum=1"`
	Sufficiency        string          `json:"sufficiency" jsonschema:"enum=sufficient,enum=gaps_minor,enum=gaps_major"`
	RecommendedQueries []PlannedQuery  `json:"recommended_queries" jsonschema_description:"Searches that would fill the gaps; empty if sufficient"`
}

// FindingOutput is one key finding with the ids of the sources supporting it.
type FindingOutput struct {
	Text       string `json:"text"`
	SourceIDs  []int  `json:"source_ids"`
	Confidence string `json:"confidence" jsonschema:"enum=high,enum=medium,enum=low"`
}

// DraftOutput is the writer's draft.
type DraftOutput struct {
	Title         string          `json:"title"`
	Abstract      string          `json:"abstract"`
	Sections      []SectionOutput `json:"sections"`
	Conclusion    string          `json:"conclusion"`
	RevisionNotes []string        `json:"revision_notes" jsonschema_description:"What changed from the previous draft; empty for a first draft"`
}

// SectionOutput is one section of a draft; content cites sources as [n].
type SectionOutput struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// CritiqueOutput is the reviewer's assessment. The weighted score and the
// recommendation are computed in code from it (seed 001 §3.3).
type CritiqueOutput struct {
	Criteria             []CriterionScore `json:"criteria" jsonschema_description:"One score 0-10 per criterion: accuracy, completeness, coherence, citation, methodology, style"`
	Items                []CritiqueItem   `json:"items"`
	Summary              string           `json:"summary"`
	ImprovementPotential float64          `json:"improvement_potential" jsonschema:"minimum=0,maximum=1"`
}
