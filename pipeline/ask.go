package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Follow-up questions. After a report, people ask about it ("what did [3]
// say about defrost cycles?"). A follow-up is answered from the pages the
// report cites and nothing else: the answer cites the report's own reference
// numbers, and every citation is checked in code against the page text, as
// the report's are (CheckCitations, VerifyClaims). When the sources do not
// answer, the answer says so and a new run can research the question with
// the parent run's context (StartFollowUp).

// MaxFollowUpWords bounds the length of a follow-up answer the model is asked for.
const MaxFollowUpWords = 250

// ErrFollowUpStarted is returned when a follow-up was already researched by a
// run of its own.
var ErrFollowUpStarted = errors.New("this follow-up question is already being researched")

// AskOutput is the model's answer to a follow-up question.
type AskOutput struct {
	Answerable bool          `json:"answerable" jsonschema_description:"true only when the source excerpts answer the question, at least in part"`
	Answer     string        `json:"answer" jsonschema_description:"The answer, citing source numbers as [n]; empty when not answerable"`
	Claims     []ClaimOutput `json:"claims" jsonschema_description:"For every sentence with a citation, one entry per cited source number: the sentence and a verbatim quote from that source that supports it"`
	Missing    string        `json:"missing" jsonschema_description:"One sentence: what the sources do not say; empty when they answer everything"`
}

// FollowUp is one question asked about a run's report and its answer.
type FollowUp struct {
	ID       string    `json:"id"` // run id + ".f" + number
	Question string    `json:"question"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	// Answered is set when the sources answer the question and at least one
	// of the answer's citations was verified against its page.
	Answered bool `json:"answered"`
	// Answer cites the report's reference numbers as [n].
	Answer string `json:"answer,omitempty"`
	// Claims are the answer's citations as checked (Ref and SourceID are
	// the report's reference number).
	Claims []Claim `json:"claims,omitempty"`
	// Missing says what the sources do not answer.
	Missing string `json:"missing,omitempty"`
	// Notes are what the citation check removed.
	Notes   []string `json:"notes,omitempty"`
	CostUSD float64  `json:"cost_usd"`
	// Child is the run that researches the question further, once started.
	Child string `json:"child,omitempty"`
}

// askData is what the ask templates see; every untrusted value is wrapped.
type askData struct {
	Question string
	Original string
	Summary  string
	IDs      string
	Excerpts []string
	MinQuote int
	MaxWords int
}

// AskPrompt renders the prompt for a follow-up question about r's report:
// the question, the original question, the report's summary, and the text of
// each page the report cites under its reference number (pages, as made by
// ReferencePages). Reply with AskOutput.
func AskPrompt(r *Run, question string, pages []Page) (system, user string) {
	d := askData{
		Question: untrustedBlock("question", question),
		Original: untrustedBlock("original_question", r.Question),
		IDs:      joinInts(pageIDs(pages)),
		MinQuote: MinQuoteWords,
		MaxWords: MaxFollowUpWords,
	}
	if r.Report != nil && strings.TrimSpace(r.Report.Abstract) != "" {
		d.Summary = untrustedBlock("report_summary", r.Report.Abstract)
	}
	for _, p := range pages {
		d.Excerpts = append(d.Excerpts, pageBlock(p, promptSourceChars(r)))
	}
	return renderPrompt("ask", d)
}

// ReferencePages returns the pages r's report cites, each numbered by its
// reference number (Page.SourceID = Reference.N), in reference order.
func ReferencePages(r *Run) []Page {
	if r.Report == nil {
		return nil
	}
	var out []Page
	for _, ref := range r.Report.References {
		for _, p := range r.Pages {
			if p.SourceID == ref.SourceID {
				p.SourceID = ref.N
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// CheckAnswer makes an answer cite only the pages given (numbered by
// reference) and verifies each citation's quote against its page. The
// answer counts as answered when the model said so, it is not blank, and
// at least one citation was verified. It is pure.
func CheckAnswer(out AskOutput, pages []Page) FollowUp {
	d, notes := CheckCitations(Draft{Abstract: strings.TrimSpace(out.Answer)}, pages)
	f := FollowUp{Answer: d.Abstract, Notes: notes, Missing: flatLine(out.Missing)}
	if !out.Answerable || strings.TrimSpace(f.Answer) == "" {
		f.Answer = ""
		f.Missing = cmp.Or(f.Missing, "The sources of this report do not answer the question.")
		return f
	}
	f.Claims = VerifyClaims(d, out.Claims, pages)
	for i := range f.Claims {
		f.Claims[i].Ref = f.Claims[i].SourceID
		f.Claims[i].Location = "Answer"
	}
	if TallyClaims(f.Claims).Verified == 0 {
		f.Answer, f.Claims = "", nil
		f.Missing = "No statement of the answer could be matched to the text of the source it cites, so the sources do not clearly answer this."
		return f
	}
	f.Answered = true
	return f
}

// validQuestion checks a follow-up question: the bounds of a research question.
func validQuestion(q string) error {
	n := utf8.RuneCountInString(q)
	if n < MinQuestionRunes || n > MaxQuestionRunes {
		return &InvalidRequestError{Problems: []string{fmt.Sprintf("a question must be %d to %d characters long (this one has %d)", MinQuestionRunes, MaxQuestionRunes, n)}}
	}
	return nil
}

// Ask answers a follow-up question about run runID's report from the pages
// the report cites, and records it with the run: the answer, its checked
// citations, and its cost, which is added to the run's spend. It returns the
// run as saved and the follow-up. A run without a report gives ErrNoReport.
func (e *Engine) Ask(ctx context.Context, runID, question, by string) (*Run, FollowUp, error) {
	question = strings.TrimSpace(strings.ToValidUTF8(question, "\uFFFD"))
	if err := validQuestion(question); err != nil {
		return nil, FollowUp{}, err
	}
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, FollowUp{}, err
	}
	if r.Report == nil {
		return r, FollowUp{}, ErrNoReport
	}
	pages := ReferencePages(r)
	var f FollowUp
	var u Usage
	if len(pages) == 0 {
		f = FollowUp{Missing: "This report cites no sources, so there is nothing to answer from."}
	} else {
		var out AskOutput
		system, user := AskPrompt(r, question, pages)
		u, err = e.cfg.Model.Generate(ctx, Prompt{Role: RoleWriter, Name: "follow_up_answer", System: system, User: user}, &out)
		if e.cfg.Observer != nil {
			e.cfg.Observer.LLMUsage(RoleWriter, u)
		}
		if err != nil {
			// What was spent is still the run's.
			_ = e.update(ctx, r, func(r *Run) bool { r.Spend.add(u); return u.Calls > 0 || u.CostUSD > 0 })
			return r, FollowUp{}, fmt.Errorf("answering the follow-up: %w", err)
		}
		f = CheckAnswer(out, pages)
	}
	f.Question, f.By, f.At, f.CostUSD = question, by, e.cfg.Clock.Now(), u.CostUSD
	err = e.update(ctx, r, func(r *Run) bool {
		f.ID = r.ID + ".f" + strconv.Itoa(len(r.FollowUps)+1)
		r.FollowUps = append(r.FollowUps, f)
		r.Spend.add(u)
		r.trace(f.At, r.Step, "follow-up %s by %s: answered=%t, %s", f.ID, by, f.Answered, TallyClaims(f.Claims))
		return true
	})
	if err != nil {
		return r, FollowUp{}, err
	}
	return r, f, nil
}

// FollowUpByID returns the follow-up with id, or nil.
func (r *Run) FollowUpByID(id string) *FollowUp {
	for i := range r.FollowUps {
		if r.FollowUps[i].ID == id {
			return &r.FollowUps[i]
		}
	}
	return nil
}

// FollowUpSpend is what r's follow-up answers cost.
func (r *Run) FollowUpSpend() float64 {
	var s float64
	for _, f := range r.FollowUps {
		s += f.CostUSD
	}
	return s
}

// FollowUpContext is the background a run researching follow-up f of
// parent starts with: the parent's question, its report's summary and the
// sources it cites or that people marked relevant.
func FollowUpContext(parent *Run, f FollowUp) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This research follows up run %s, which asked: %s\n", parent.ID, flatLine(parent.Question))
	if parent.Report != nil && strings.TrimSpace(parent.Report.Abstract) != "" {
		fmt.Fprintf(&b, "Its report concluded: %s\n", clipText(flatLine(stripMarkers(parent.Report.Abstract)), 1200))
	}
	if f.Missing != "" {
		fmt.Fprintf(&b, "Its sources did not answer the follow-up question: %s\n", flatLine(f.Missing))
	}
	var srcs []string
	seen := map[string]bool{}
	add := func(title, u string) {
		if u == "" || seen[u] || len(srcs) == 10 {
			return
		}
		seen[u] = true
		srcs = append(srcs, flatLine(nonBlank(title, hostDomain(u)))+" — "+flatLine(u))
	}
	if parent.Report != nil {
		for _, ref := range parent.Report.References {
			add(ref.Title, ref.URL)
		}
	}
	for _, s := range parent.Sources {
		if s.Relevant {
			add(s.Title, s.URL)
		}
	}
	if len(srcs) > 0 {
		b.WriteString("Sources it already read or people marked relevant:\n" + bulletLines(srcs))
	}
	return strings.TrimSpace(b.String())
}

// add books one model call's usage.
func (s *Spend) add(u Usage) {
	s.PromptTokens += u.PromptTokens
	s.CompletionTokens += u.CompletionTokens
	s.CostUSD += u.CostUSD
	calls := u.Calls
	calls = cmp.Or(calls, 1)
	s.LLMCalls += calls
}

// FollowUpRun is the run id a follow-up id belongs to ("" when malformed).
func FollowUpRun(followUpID string) string {
	i := strings.LastIndex(followUpID, ".f")
	if i <= 0 {
		return ""
	}
	return followUpID[:i]
}

// claimFollowUp links follow-up req.FollowUpOf to the run childID about to
// be created (compare-and-set: a follow-up gets one run), and completes req
// from it: the question, the parent's mode and depth when unset, and the
// parent's context.
func (e *Engine) claimFollowUp(ctx context.Context, req *Request, childID string) error {
	parent, err := e.cfg.Store.Load(ctx, FollowUpRun(req.FollowUpOf))
	if err != nil {
		return err
	}
	f := parent.FollowUpByID(req.FollowUpOf)
	if f == nil {
		return fmt.Errorf("follow-up %s: %w", req.FollowUpOf, ErrNotFound)
	}
	if strings.TrimSpace(req.Question) == "" {
		req.Question = f.Question
	}
	req.Mode = cmp.Or(req.Mode, parent.Mode)
	req.Depth = cmp.Or(req.Depth, parent.Depth)
	req.Context = strings.TrimSpace(FollowUpContext(parent, *f) + "\n" + req.Context)
	if err := ValidateRequest(*req); err != nil {
		return err
	}
	var taken string
	err = e.update(ctx, parent, func(p *Run) bool {
		g := p.FollowUpByID(req.FollowUpOf)
		if g == nil || g.Child != "" {
			if g != nil {
				taken = g.Child
			}
			return false
		}
		g.Child = childID
		p.trace(e.cfg.Clock.Now(), p.Step, "follow-up %s is researched by run %s", g.ID, childID)
		return true
	})
	if err != nil {
		return err
	}
	if taken != "" {
		return fmt.Errorf("%w: run %s", ErrFollowUpStarted, taken)
	}
	return nil
}

// releaseFollowUp unlinks a follow-up from a run that could not be created.
func (e *Engine) releaseFollowUp(ctx context.Context, followUpID, childID string) {
	parent, err := e.cfg.Store.Load(ctx, FollowUpRun(followUpID))
	if err == nil {
		err = e.update(ctx, parent, func(p *Run) bool {
			g := p.FollowUpByID(followUpID)
			if g == nil || g.Child != childID {
				return false
			}
			g.Child = ""
			return true
		})
	}
	if err != nil {
		e.log.Warn("pipeline: unlinking a follow-up from a run that was not created failed", "follow_up", followUpID, "err", err)
	}
}
