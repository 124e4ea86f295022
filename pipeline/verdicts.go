package pipeline

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxFeedbackReasonRunes is the longest reason kept with a verdict.
const MaxFeedbackReasonRunes = 1000

// ErrNoReport is returned for a verdict on a run that has no report (yet).
var ErrNoReport = errors.New("the run has no report")

// ErrNoAnswer is returned for a verdict on a follow-up the run has not
// answered.
var ErrNoAnswer = errors.New("the run has no such answered follow-up")

// Verdict is one person's verdict on a run's report, or on one of its
// follow-up answers: useful or not, and optionally why.
type Verdict struct {
	By     string `json:"by"`
	Useful bool   `json:"useful"`
	// On is the follow-up answered (its id); empty for the report itself.
	On     string    `json:"on,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}

// RecordVerdict saves f with the run (compare-and-set), replacing the
// verdict f.By gave before on the same thing (the report, or the follow-up
// f.On): a person has one verdict on each and may change it. A reason given
// with the same verdict is kept unless f brings a new one.
func (e *Engine) RecordVerdict(ctx context.Context, runID string, f Verdict) (*Run, error) {
	if f.By == "" {
		return nil, errors.New("a verdict needs the person who gave it")
	}
	f.Reason = strings.TrimSpace(strings.ToValidUTF8(f.Reason, "\uFFFD"))
	if utf8.RuneCountInString(f.Reason) > MaxFeedbackReasonRunes {
		f.Reason = string([]rune(f.Reason)[:MaxFeedbackReasonRunes])
	}
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Report == nil {
		return r, ErrNoReport
	}
	if f.On != "" && !r.answered(f.On) {
		return r, ErrNoAnswer
	}
	err = e.update(ctx, r, func(r *Run) bool {
		for i, old := range r.Verdicts {
			if old.By != f.By || old.On != f.On {
				continue
			}
			if f.Reason == "" && old.Useful == f.Useful {
				f.Reason = old.Reason
			}
			r.Verdicts[i] = f
			return true
		}
		r.Verdicts = append(r.Verdicts, f)
		return true
	})
	return r, err
}

// answered reports whether the run has the answered follow-up id.
func (r *Run) answered(id string) bool {
	for _, f := range r.FollowUps {
		if f.ID == id {
			return f.Answered
		}
	}
	return false
}

// VerdictTally counts a run's verdicts on its report (not on its
// follow-up answers).
func (r *Run) VerdictTally() (useful, notUseful int) {
	for _, f := range r.Verdicts {
		if f.On != "" {
			continue
		}
		if f.Useful {
			useful++
		} else {
			notUseful++
		}
	}
	return useful, notUseful
}
