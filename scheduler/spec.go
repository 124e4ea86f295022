package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Spec is a research stream's configuration, built up by the creation conversation.
type Spec struct {
	Owner            string       `json:"owner"`      // Slack user ID of the creator
	Channel          string       `json:"channel"`    // Slack channel ID the digest is posted to
	CreatedAt        time.Time    `json:"created_at"` // anchors biweekly parity
	Purpose          string       `json:"purpose"`
	BusinessGoals    []string     `json:"business_goals"`
	ExpectedOutcomes string       `json:"expected_outcomes"`
	Name             string       `json:"stream_name"`
	Type             StreamType   `json:"stream_type"`
	FocusAreas       []string     `json:"focus_areas"`
	Keywords         []string     `json:"keywords"`
	Competitors      []string     `json:"competitors"`
	Frequency        Frequency    `json:"report_frequency"`
	TimeOfDay        string       `json:"time_of_day"` // "HH:MM", 24-hour clock
	TimeZone         string       `json:"time_zone"`   // IANA name
	Weekday          time.Weekday `json:"weekday"`     // weekly and biweekly
	MonthDay         int          `json:"month_day"`   // monthly, 1..31
}

// Defaults used by [BeginConversation].
const (
	DefaultTimeOfDay = "09:00"
	DefaultTimeZone  = "UTC" // when the creator's Slack time zone is unknown or invalid
	DefaultWeekday   = time.Monday
	DefaultMonthDay  = 1
)

// ErrIncompleteSpec is wrapped by [Spec.Validate] errors.
var ErrIncompleteSpec = errors.New("scheduler: stream configuration is incomplete or invalid")

// Schedule returns the stream's schedule; biweekly parity is anchored to CreatedAt.
func (s Spec) Schedule() ScheduleSpec {
	return ScheduleSpec{
		Frequency: s.Frequency,
		TimeOfDay: s.TimeOfDay,
		TimeZone:  s.TimeZone,
		Weekday:   s.Weekday,
		MonthDay:  s.MonthDay,
		Anchor:    s.CreatedAt,
	}
}

// Validate reports every missing or invalid field, and any schedule problem, at once.
func (s Spec) Validate() error {
	var errs []error
	if strings.TrimSpace(s.Owner) == "" {
		errs = append(errs, errors.New("owner is missing"))
	}
	for _, d := range fieldDefs {
		v := s.get(d.field)
		if !d.required && !d.defaulted && isEmpty(v) {
			continue
		}
		if _, err := d.normalize(v); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.Schedule().Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrIncompleteSpec, errors.Join(errs...))
}

// ReviewLine is one row of the configuration shown at the review step.
type ReviewLine struct {
	Field SpecField `json:"field"`
	Label string    `json:"label"`
	Value string    `json:"value"` // untrusted plain text; "—" when empty
}

// ReviewLines returns the whole configuration in workflow order, for the review step.
// Weekday and day of month appear only when the frequency uses them.
func (s Spec) ReviewLines() []ReviewLine {
	var out []ReviewLine
	for _, d := range fieldDefs {
		if !s.relevant(d.field) {
			continue
		}
		v := s.get(d.field)
		text := v.Value
		if d.kind == kindList {
			text = strings.Join(v.Values, ", ")
		}
		text = cmp.Or(text, "—")
		out = append(out, ReviewLine{Field: d.field, Label: d.label, Value: text})
	}
	if err := s.Schedule().Validate(); err == nil {
		out = append(out, ReviewLine{Field: "", Label: "Schedule", Value: s.Schedule().Describe()})
	}
	return out
}

// relevant reports whether f applies given the chosen frequency: weekday only to
// weekly and biweekly streams, month_day only to monthly ones.
func (s Spec) relevant(f SpecField) bool {
	switch f {
	case FieldWeekday:
		r, _ := s.Frequency.rule()
		return r.onWeekday
	case FieldMonthDay:
		r, _ := s.Frequency.rule()
		return r.onMonthDay
	}
	return true
}

// get returns the value of f in s, as strings.
func (s Spec) get(f SpecField) FieldValue {
	v := FieldValue{Field: f}
	switch f {
	case FieldPurpose:
		v.Value = s.Purpose
	case FieldBusinessGoals:
		v.Values = s.BusinessGoals
	case FieldExpectedOutcomes:
		v.Value = s.ExpectedOutcomes
	case FieldStreamName:
		v.Value = s.Name
	case FieldStreamType:
		v.Value = string(s.Type)
	case FieldFocusAreas:
		v.Values = s.FocusAreas
	case FieldKeywords:
		v.Values = s.Keywords
	case FieldCompetitors:
		v.Values = s.Competitors
	case FieldReportFrequency:
		v.Value = string(s.Frequency)
	case FieldChannel:
		v.Value = s.Channel
	case FieldTimeOfDay:
		v.Value = s.TimeOfDay
	case FieldTimeZone:
		v.Value = s.TimeZone
	case FieldWeekday:
		v.Value = weekdayName(s.Weekday)
	case FieldMonthDay:
		if s.MonthDay != 0 {
			v.Value = strconv.Itoa(s.MonthDay)
		}
	}
	return v
}

// set stores an already normalized value of f in s.
func (s *Spec) set(v FieldValue) {
	list := append([]string(nil), v.Values...)
	switch v.Field {
	case FieldPurpose:
		s.Purpose = v.Value
	case FieldBusinessGoals:
		s.BusinessGoals = list
	case FieldExpectedOutcomes:
		s.ExpectedOutcomes = v.Value
	case FieldStreamName:
		s.Name = v.Value
	case FieldStreamType:
		s.Type = StreamType(v.Value)
	case FieldFocusAreas:
		s.FocusAreas = list
	case FieldKeywords:
		s.Keywords = list
	case FieldCompetitors:
		s.Competitors = list
	case FieldReportFrequency:
		s.Frequency = Frequency(v.Value)
	case FieldChannel:
		s.Channel = v.Value
	case FieldTimeOfDay:
		s.TimeOfDay = v.Value
	case FieldTimeZone:
		s.TimeZone = v.Value
	case FieldWeekday:
		s.Weekday = weekdayFromName(v.Value)
	case FieldMonthDay:
		s.MonthDay, _ = strconv.Atoi(v.Value)
	}
}

// has reports whether f has a value in s.
func (s Spec) has(f SpecField) bool { return !isEmpty(s.get(f)) }

func isEmpty(v FieldValue) bool { return v.Value == "" && len(v.Values) == 0 }

// clone returns a deep copy of s.
func (s Spec) clone() Spec {
	s.BusinessGoals = cloneStrings(s.BusinessGoals)
	s.FocusAreas = cloneStrings(s.FocusAreas)
	s.Keywords = cloneStrings(s.Keywords)
	s.Competitors = cloneStrings(s.Competitors)
	return s
}

func cloneStrings(in []string) []string {
	if in == nil {
		return nil
	}
	return append([]string(nil), in...)
}
