package llm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The bench types mirror pipeline.AnalysisOutput, a typical reply: lists of
// objects behind $refs, enums, bounds and nested arrays.
type (
	benchAnalysis struct {
		SubQuestions       []benchCoverage      `json:"sub_questions"`
		Findings           []benchFinding       `json:"findings"`
		Themes             []string             `json:"themes"`
		Contradictions     []benchContradiction `json:"contradictions"`
		Gaps               []string             `json:"gaps"`
		Confidence         float64              `json:"confidence" jsonschema:"minimum=0,maximum=1"`
		Sufficiency        string               `json:"sufficiency" jsonschema:"enum=sufficient,enum=gaps_minor,enum=gaps_major"`
		RecommendedQueries []benchQuery         `json:"recommended_queries"`
	}
	benchCoverage struct {
		Number    int    `json:"number"`
		Status    string `json:"status" jsonschema:"enum=answered,enum=partly,enum=unanswered"`
		Summary   string `json:"summary"`
		SourceIDs []int  `json:"source_ids"`
	}
	benchFinding struct {
		Text      string `json:"text"`
		SourceIDs []int  `json:"source_ids"`
		Evidence  string `json:"evidence" jsonschema:"enum=strong,enum=moderate,enum=weak,enum=gap"`
	}
	benchContradiction struct {
		Topic      string    `json:"topic"`
		SideA      benchSide `json:"side_a"`
		SideB      benchSide `json:"side_b"`
		Assessment string    `json:"assessment"`
	}
	benchSide struct {
		Claim     string `json:"claim"`
		SourceIDs []int  `json:"source_ids"`
	}
	benchQuery struct {
		Query       string `json:"query"`
		Kind        string `json:"kind" jsonschema:"enum=web,enum=academic,enum=news"`
		SubQuestion int    `json:"sub_question"`
	}
)

// benchReply is a typical analysis: 4 sub-questions, 8 findings, 2
// contradictions, 3 queries (about 3 kB).
func benchReply(b *testing.B) string {
	b.Helper()
	var a benchAnalysis
	for i := range 4 {
		a.SubQuestions = append(a.SubQuestions, benchCoverage{i + 1, "partly", strings.Repeat("evidence says ", 8), []int{1, 2, 3}})
		a.Themes = append(a.Themes, fmt.Sprintf("theme %d", i))
	}
	for i := range 8 {
		a.Findings = append(a.Findings, benchFinding{strings.Repeat("a finding ", 10), []int{i, i + 1}, "moderate"})
	}
	for range 2 {
		a.Contradictions = append(a.Contradictions, benchContradiction{"dates", benchSide{"one", []int{1}}, benchSide{"other", []int{2}}, "unresolved"})
	}
	for i := range 3 {
		a.RecommendedQueries = append(a.RecommendedQueries, benchQuery{"query text", "web", i + 1})
	}
	a.Gaps, a.Confidence, a.Sufficiency = []string{"costs"}, 0.7, "gaps_minor"
	raw, err := json.Marshal(a)
	if err != nil {
		b.Fatal(err)
	}
	return string(raw)
}

// BenchmarkValidate is the validation of one typical valid reply.
func BenchmarkValidate(b *testing.B) {
	s, err := buildSchema(reflect.TypeFor[benchAnalysis]())
	if err != nil {
		b.Fatal(err)
	}
	reply := benchReply(b)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		if p := s.validate(reply); len(p) != 0 {
			b.Fatal(p)
		}
	}
}

// BenchmarkValidateInvalid is the validation of a typical reply with two
// problems deep in its lists (the repair path).
func BenchmarkValidateInvalid(b *testing.B) {
	s, err := buildSchema(reflect.TypeFor[benchAnalysis]())
	if err != nil {
		b.Fatal(err)
	}
	reply := strings.Replace(benchReply(b), `"moderate"`, `"medium"`, 2)
	b.ReportAllocs()
	for b.Loop() {
		if p := s.validate(reply); len(p) == 0 {
			b.Fatal("invalid reply accepted")
		}
	}
}

// BenchmarkBuildSchema is deriving and compiling the schema of one reply
// type (once per type per client).
func BenchmarkBuildSchema(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildSchema(reflect.TypeFor[benchAnalysis]()); err != nil {
			b.Fatal(err)
		}
	}
}
