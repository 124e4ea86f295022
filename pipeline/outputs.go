package pipeline

// The structured outputs the LLM returns. (The prompt templates,
// prompts/*.tmpl, describe these same structs to the model.)
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
	// Assumptions and ClarifyingQuestions: where the question is ambiguous
	// or under-specified, what the plan assumes, and what to ask the
	// person before researching (asked at most once a run, never in auto
	// mode or a stream's digest).
	Assumptions         []string             `json:"assumptions" jsonschema_description:"What the plan assumes where the question is ambiguous or under-specified; empty if nothing"`
	ClarifyingQuestions []ClarifyingQuestion `json:"clarifying_questions" jsonschema_description:"At most 3 questions to ask the person before researching, only when the answers would change the plan; empty otherwise"`
}

// ClarifyingQuestion is one question the planner would ask the person
// before researching, and why the answer matters.
type ClarifyingQuestion struct {
	Question string `json:"question"`
	Why      string `json:"why" jsonschema_description:"How the answer would change the research"`
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
	SubQuestions       []CoverageOutput      `json:"sub_questions" jsonschema_description:"One entry per sub-question of the plan: does the evidence answer it"`
	Findings           []FindingOutput       `json:"findings"`
	Themes             []string              `json:"themes"`
	Contradictions     []ContradictionOutput `json:"contradictions" jsonschema_description:"Places where sources disagree; empty if none"`
	Gaps               []string              `json:"gaps"`
	Confidence         float64               `json:"confidence" jsonschema:"minimum=0,maximum=1"`
	Sufficiency        string                `json:"sufficiency" jsonschema:"enum=sufficient,enum=gaps_minor,enum=gaps_major"`
	RecommendedQueries []PlannedQuery        `json:"recommended_queries" jsonschema_description:"Searches that would fill the gaps; empty if sufficient"`
}

// CoverageOutput is the analyst's view of one sub-question.
type CoverageOutput struct {
	Number    int    `json:"number" jsonschema_description:"1-based number of the sub-question"`
	Status    string `json:"status" jsonschema:"enum=answered,enum=partly,enum=unanswered"`
	Summary   string `json:"summary" jsonschema_description:"One or two sentences: what the evidence says on it, or what is missing"`
	SourceIDs []int  `json:"source_ids"`
}

// ContradictionOutput is one disagreement between sources.
type ContradictionOutput struct {
	Topic      string     `json:"topic" jsonschema_description:"What the sources disagree about, in a few words"`
	SideA      SideOutput `json:"side_a"`
	SideB      SideOutput `json:"side_b"`
	Assessment string     `json:"assessment" jsonschema_description:"Which reading the evidence favours and why (credibility, dates), or that it cannot be resolved"`
}

// SideOutput is one side of a disagreement.
type SideOutput struct {
	Claim     string `json:"claim" jsonschema_description:"What these sources say"`
	SourceIDs []int  `json:"source_ids"`
}

// FindingOutput is one key finding with the ids of the sources supporting it.
type FindingOutput struct {
	Text      string `json:"text"`
	SourceIDs []int  `json:"source_ids"`
	Evidence  string `json:"evidence" jsonschema:"enum=strong,enum=moderate,enum=weak,enum=gap" jsonschema_description:"strong: several independent sources agree, with primary data; moderate: two or three sources agree, mostly secondary; weak: one source or conflicting information; gap: no relevant evidence found"`
}

// DraftOutput is the writer's draft.
type DraftOutput struct {
	Title      string          `json:"title"`
	Abstract   string          `json:"abstract"`
	Sections   []SectionOutput `json:"sections"`
	Conclusion string          `json:"conclusion"`
	// Claims give, for each cited sentence and each source it cites, the
	// words of that source that support it; code checks them.
	Claims        []ClaimOutput `json:"claims" jsonschema_description:"For every sentence with a citation, one entry per cited source id: the sentence and a verbatim quote from that source that supports it"`
	RevisionNotes []string      `json:"revision_notes" jsonschema_description:"What changed from the previous draft; empty for a first draft"`
	Addressed     []int         `json:"addressed" jsonschema_description:"Numbers of the critique items this revision addressed; empty for a first draft"`
}

// ClaimOutput is the writer's evidence for one cited sentence and source.
type ClaimOutput struct {
	Sentence string `json:"sentence" jsonschema_description:"The cited sentence, copied from the report"`
	SourceID int    `json:"source_id" jsonschema_description:"One source id the sentence cites"`
	Quote    string `json:"quote" jsonschema_description:"5 to 40 words copied exactly from that source's text that support the sentence"`
}

// SectionOutput is one section of a draft; content cites sources as [n].
type SectionOutput struct {
	Title   string `json:"title"`
	Content string `json:"content"`
}

// ReformulationOutput rewrites searches whose results were all irrelevant.
type ReformulationOutput struct {
	Queries []ReformulatedQuery `json:"queries"`
}

// ReformulatedQuery is a new wording of one search.
type ReformulatedQuery struct {
	QueryID string `json:"query_id" jsonschema_description:"The id of the search being rewritten, e.g. q3"`
	Text    string `json:"text"`
	Kind    string `json:"kind" jsonschema:"enum=web,enum=academic,enum=news"`
}

// CritiqueOutput is the reviewer's assessment. The weighted score and the
// recommendation are computed in code from it (seed 001 §3.3).
type CritiqueOutput struct {
	Criteria             []CriterionScore `json:"criteria" jsonschema_description:"One score 0-10 per criterion: accuracy, completeness, coherence, citation, methodology, style"`
	Items                []CritiqueItem   `json:"items"`
	Summary              string           `json:"summary"`
	ImprovementPotential float64          `json:"improvement_potential" jsonschema:"minimum=0,maximum=1"`
}
