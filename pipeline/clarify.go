package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// Clarifying questions before the plan (issue 24). The planner's structured
// output may carry up to three clarifying questions, each with why it
// matters, and the assumptions its plan makes without answers. In guided
// and full mode, the first time a run plans, those questions are asked at
// the built-in clarify checkpoint, before the plan review: the person
// answers them (Edit: the answer fields, labelled with the questions, or a
// mention of the bot in the thread), or skips them, and the run plans on
// its stated assumptions; the checkpoint is optional, so a timeout skips
// it too. Answers set the plan made before them aside (nobody saw it) and
// send the run back to the planner, whose prompt carries the questions and
// answers; it is not asked again. Questions are never asked in auto mode,
// in a stream's digest, or twice in one run. The plan names the
// assumptions it made, in the plan review and in the report's "How this
// report was made".

// Bounds of clarifying questions (invariant 7).
const (
	maxClarifyRunes    = 300 // one question or its why
	maxAssumptions     = 5
	maxAssumptionRunes = 300
	maxAnswerRunes     = 1000
)

// Clarification is what a run asked before its plan and what it was told.
type Clarification struct {
	Questions []ClarifyingQuestion `json:"questions"`
	// Assumptions are what the plan made before any answer assumed.
	Assumptions []string  `json:"assumptions,omitempty"`
	At          time.Time `json:"at"`
	// InstanceID is the clarify checkpoint that asked them ("" until asked).
	InstanceID string `json:"instance_id,omitempty"`
	// NotAsked says why questions the planner had were not asked (the
	// clarify checkpoint is disabled, say); "" when they were.
	NotAsked string `json:"not_asked,omitempty"`
	// Answers hold one answer per question ("" for none); Reply is an
	// answer in the person's own words (a mention in the thread).
	Answers    []string  `json:"answers,omitempty"`
	Reply      string    `json:"reply,omitempty"`
	AnsweredBy string    `json:"answered_by,omitempty"`
	AnsweredAt time.Time `json:"answered_at,omitzero"`
}

// Answered reports whether the person answered any of the questions.
func (c *Clarification) Answered() bool {
	return c != nil && (c.Reply != "" || slices.ContainsFunc(c.Answers, func(a string) bool { return a != "" }))
}

// ClarifyPayload is shown at the clarify checkpoint.
type ClarifyPayload struct {
	Question    string               `json:"question"`
	Questions   []ClarifyingQuestion `json:"questions"`
	Assumptions []string             `json:"assumptions,omitempty"`
}

// mayClarify reports whether the run may still ask clarifying questions:
// a person can be asked (not auto mode, not a stream's digest) and none
// were asked before.
func (r *Run) mayClarify() bool {
	return r.Mode != checkpoints.ModeAuto && r.Origin.StreamID == "" && r.Clarification == nil
}

// takeClarification keeps the plan's assumptions, and its clarifying
// questions when the run may ask them: the clarify checkpoint at
// after_planning then asks them (clarifyFirst).
func (r *Run) takeClarification(out PlanOutput, now time.Time) {
	r.Plan.Assumptions = clippedLines(out.Assumptions, maxAssumptions, maxAssumptionRunes)
	if !r.mayClarify() {
		return
	}
	var qs []ClarifyingQuestion
	for _, q := range out.ClarifyingQuestions {
		text := clipText(flatLine(q.Question), maxClarifyRunes)
		if text == "" {
			continue
		}
		qs = append(qs, ClarifyingQuestion{Question: text, Why: clipText(flatLine(q.Why), maxClarifyRunes)})
		if len(qs) == checkpoints.MaxClarifyingQuestions {
			break
		}
	}
	if len(qs) == 0 {
		return
	}
	r.Clarification = &Clarification{Questions: qs, Assumptions: slices.Clone(r.Plan.Assumptions), At: now}
	r.trace(now, StepPlan, "the planner has %d clarifying question(s) for the person", len(qs))
}

// clippedLines is cleanLines of in, at most n lines of at most runes each.
func clippedLines(in []string, n, runes int) []string {
	var out []string
	for _, l := range cleanLines(in) {
		if len(out) == n {
			break
		}
		out = append(out, clipText(flatLine(l), runes))
	}
	return out
}

// clarifyFirst orders the definitions of an after_planning pause: the
// clarify checkpoint first when the run has questions to ask, and left out
// otherwise. Questions the checkpoint cannot ask (an admin disabled it)
// are recorded as not asked: the run plans on its assumptions.
func (r *Run) clarifyFirst(defs []checkpoints.Definition) []checkpoints.Definition {
	c := r.Clarification
	ask := c != nil && c.InstanceID == "" && c.NotAsked == ""
	i := slices.IndexFunc(defs, func(d checkpoints.Definition) bool { return d.ID == checkpoints.Clarify })
	if i < 0 {
		if ask {
			c.NotAsked = "the clarify checkpoint is disabled here"
		}
		return defs
	}
	clarify := defs[i]
	rest := slices.Delete(slices.Clone(defs), i, i+1)
	if !ask {
		return rest
	}
	return append([]checkpoints.Definition{clarify}, rest...)
}

// clarifyPayload is what the clarify checkpoint shows.
func (r *Run) clarifyPayload() ClarifyPayload {
	p := ClarifyPayload{Question: r.Question}
	if c := r.Clarification; c != nil {
		p.Questions, p.Assumptions = c.Questions, c.Assumptions
	}
	return p
}

// clarifyFields labels the answer fields with the questions (their why as
// help) and leaves out the ones without a question; with one question the
// reply in one's own words is the answer field itself and is left out.
func (r *Run) clarifyFields(fs []checkpoints.Field) []checkpoints.Field {
	var qs []ClarifyingQuestion
	if r.Clarification != nil {
		qs = r.Clarification.Questions
	}
	out := fs[:0]
	for _, f := range fs {
		if n := slices.Index(checkpoints.AnswerKeys[:], f.Key); n >= 0 {
			if n >= len(qs) {
				continue
			}
			f.Label = fmt.Sprintf("%d. %s", n+1, qs[n].Question)
			if qs[n].Why != "" {
				f.Help = "Why I ask: " + qs[n].Why
			}
		}
		if f.Key == checkpoints.KeyReply && len(qs) == 1 {
			continue
		}
		out = append(out, f)
	}
	return out
}

// ClarifyReply is the decision values of an answer given in one message
// (a mention in the thread) to the clarify checkpoint inst: the reply
// field when the form has one, else the first answer field.
func ClarifyReply(inst *checkpoints.Instance, text string) map[string]any {
	key := checkpoints.KeyAnswer1
	if slices.ContainsFunc(inst.Fields, func(f checkpoints.Field) bool { return f.Key == checkpoints.KeyReply }) {
		key = checkpoints.KeyReply
	}
	return map[string]any{key: strings.TrimSpace(text)}
}

// decideClarify applies the answers to the clarifying questions: the plan
// made before them was never shown, so it is set aside (its round given
// back) and the run plans again with them. An answer with nothing in it
// is a skip: the run goes on with its plan and assumptions.
func (r *Run) decideClarify(d *checkpoints.Decision) {
	c := r.Clarification
	if c == nil {
		return
	}
	answers := make([]string, len(c.Questions))
	for i := range answers {
		answers[i] = clipText(stringValue(d.Values, checkpoints.AnswerKeys[i]), maxAnswerRunes)
	}
	answered := &Clarification{Answers: answers, Reply: clipText(stringValue(d.Values, checkpoints.KeyReply), maxAnswerRunes)}
	if !answered.Answered() {
		return
	}
	c.Answers, c.Reply, c.AnsweredBy, c.AnsweredAt = answered.Answers, answered.Reply, d.By, d.At
	r.Plan = nil
	r.SearchRoundQueries(nil)
	r.Estimate = nil
	r.Counters.PlanRounds = max(0, r.Counters.PlanRounds-1)
	r.Step = StepPlan
}

// clarificationBlock is the planner's view of the questions asked and the
// person's answers, in an untrusted block; "" when nothing was answered.
func clarificationBlock(r *Run) string {
	c := r.Clarification
	if !c.Answered() {
		return ""
	}
	var b strings.Builder
	for i, q := range c.Questions {
		fmt.Fprintf(&b, "Question %d: %s\n", i+1, flatLine(q.Question))
		if i < len(c.Answers) && c.Answers[i] != "" {
			fmt.Fprintf(&b, "Answer: %s\n", flatLine(c.Answers[i]))
		} else {
			b.WriteString("Answer: (none)\n")
		}
	}
	if c.Reply != "" {
		fmt.Fprintf(&b, "Reply in the person's own words: %s\n", flatLine(c.Reply))
	}
	return untrustedBlock("clarification", strings.TrimRight(b.String(), "\n"))
}

// ClarifyOutcome says what became of the run's clarifying questions, in
// one line for people; "" when none were asked.
func (r *Run) ClarifyOutcome() string {
	c := r.Clarification
	switch {
	case c == nil:
		return ""
	case c.NotAsked != "":
		return fmt.Sprintf("the planner had %d clarifying question(s), not asked (%s); it planned on its assumptions", len(c.Questions), c.NotAsked)
	case c.Answered():
		return fmt.Sprintf("%d clarifying question(s) asked before the plan; answered by %s", len(c.Questions), c.AnsweredBy)
	}
	inst := r.Instance(c.InstanceID)
	if inst == nil {
		return fmt.Sprintf("%d clarifying question(s) to ask before the plan", len(c.Questions))
	}
	switch {
	case inst.State == checkpoints.StateSkipped:
		a := inst.Audit[len(inst.Audit)-1]
		switch {
		case a.Actor == "engine" && strings.HasSuffix(a.Note, "timed out"):
			return fmt.Sprintf("%d clarifying question(s) asked before the plan; nobody answered within %s, so it planned on its assumptions", len(c.Questions), waitWords(inst.Timeout))
		case a.Actor == "engine":
			return fmt.Sprintf("%d clarifying question(s) not asked: %s; it planned on its assumptions", len(c.Questions), strings.TrimPrefix(a.Note, "skipped: "))
		}
		return fmt.Sprintf("%d clarifying question(s) asked before the plan; skipped by %s, so it planned on its assumptions", len(c.Questions), a.Actor)
	case inst.Decision != nil:
		return fmt.Sprintf("%d clarifying question(s) asked before the plan; %s answered none, so it planned on its assumptions", len(c.Questions), inst.Decision.By)
	}
	return fmt.Sprintf("%d clarifying question(s) asked before the plan; waiting for answers", len(c.Questions))
}

// clarifyProvenance is the report's account of the conversation before
// the plan: the questions and what became of them, and the assumptions
// the plan made.
func clarifyProvenance(r *Run) []string {
	var out []string
	if o := r.ClarifyOutcome(); o != "" {
		out = append(out, upperFirst(o))
		c := r.Clarification
		for i, q := range c.Questions {
			line := fmt.Sprintf("Asked: %s", q.Question)
			if i < len(c.Answers) && c.Answers[i] != "" {
				line += " — answer: " + c.Answers[i]
			}
			out = append(out, line)
		}
		if c.Reply != "" {
			out = append(out, "Reply: "+c.Reply)
		}
	}
	if r.Plan != nil {
		for _, a := range r.Plan.Assumptions {
			out = append(out, "Assumed: "+a)
		}
	}
	return out
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// waitWords says a wait in words: "1 hour", "3 hours", "45 minutes".
func waitWords(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d > 0 && d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d minutes", int(d.Round(time.Minute)/time.Minute))
}
