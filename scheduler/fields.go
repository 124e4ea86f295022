package scheduler

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// SpecField names one piece of a stream's configuration. Each data step collects the field
// of the same name.
type SpecField string

// The fields of a stream. The first nine come from the design (seed 003); channel,
// time_of_day, time_zone, weekday and month_day are what a Slack digest needs and have
// defaults, so the user may skip them.
const (
	FieldPurpose          SpecField = "purpose"
	FieldBusinessGoals    SpecField = "business_goals"
	FieldExpectedOutcomes SpecField = "expected_outcomes"
	FieldStreamName       SpecField = "stream_name"
	FieldStreamType       SpecField = "stream_type"
	FieldFocusAreas       SpecField = "focus_areas"
	FieldKeywords         SpecField = "keywords"
	FieldCompetitors      SpecField = "competitors"
	FieldReportFrequency  SpecField = "report_frequency"
	FieldChannel          SpecField = "channel"
	FieldTimeOfDay        SpecField = "time_of_day"
	FieldTimeZone         SpecField = "time_zone"
	FieldWeekday          SpecField = "weekday"
	FieldMonthDay         SpecField = "month_day"
)

// StreamType is the kind of research a stream does.
type StreamType string

// The supported stream types.
const (
	TypeCompetitive StreamType = "competitive"
	TypeRegulatory  StreamType = "regulatory"
	TypeClinical    StreamType = "clinical"
	TypeMarket      StreamType = "market"
	TypeScientific  StreamType = "scientific"
	TypeMixed       StreamType = "mixed"
)

// FieldValue is one field's value: Value for single-valued fields, Values for list
// fields (business_goals, focus_areas, keywords, competitors); the other one is empty.
// It is a pair rather than a map so that it fits strict JSON-schema structured output.
type FieldValue struct {
	Field  SpecField `json:"field" jsonschema:"enum=purpose,enum=business_goals,enum=expected_outcomes,enum=stream_name,enum=stream_type,enum=focus_areas,enum=keywords,enum=competitors,enum=report_frequency,enum=channel,enum=time_of_day,enum=time_zone,enum=weekday,enum=month_day" jsonschema_description:"name of the field, one of the available fields"`
	Value  string    `json:"value" jsonschema_description:"the value for a single-valued field; empty for a list field"`
	Values []string  `json:"values" jsonschema_description:"the items for a list field; empty for a single-valued field"`
}

// Limits on field values.
const (
	MaxTextLen   = 1000 // runes in purpose, expected_outcomes
	MaxNameLen   = 80   // runes in stream_name
	MaxListItems = 20   // items in a list field
	MaxItemLen   = 200  // runes in one list item
)

// ErrInvalidValue is wrapped by every field validation error.
var ErrInvalidValue = errors.New("scheduler: invalid field value")

type valueKind int

const (
	kindText valueKind = iota
	kindName
	kindList
	kindChoice
	kindChannel
	kindClock
	kindZone
	kindMonthDay
)

// fieldDef describes a field: its type, whether the user must provide it, and how the
// bot asks for it.
type fieldDef struct {
	field    SpecField
	kind     valueKind
	required bool // must be given by the user; cannot be skipped
	// defaulted fields hold a default from the start; skipping keeps it.
	defaulted bool
	label     string
	typ       string // type as told to the model
	question  string
	choices   []string
}

var weekdayNames = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// fieldDefs is the field table in workflow order. It is read-only.
var fieldDefs = []fieldDef{
	{field: FieldPurpose, kind: kindText, required: true, label: "Purpose", typ: "text",
		question: "What's the purpose of this research stream?"},
	{field: FieldBusinessGoals, kind: kindList, required: true, label: "Business goals", typ: "list",
		question: "Which business goals should this stream support?"},
	{field: FieldExpectedOutcomes, kind: kindText, required: true, label: "Expected outcomes", typ: "text",
		question: "What outcomes or decisions will this stream drive?"},
	{field: FieldStreamName, kind: kindName, required: true, label: "Name", typ: "text, at most 80 characters, one line",
		question: "What should we call this stream?"},
	{field: FieldStreamType, kind: kindChoice, required: true, label: "Type", typ: "single-select",
		question: "What type of research is this?",
		choices:  []string{"competitive", "regulatory", "clinical", "market", "scientific", "mixed"}},
	{field: FieldFocusAreas, kind: kindList, required: true, label: "Focus areas", typ: "list",
		question: "Which therapeutic areas or research domains should it focus on?"},
	{field: FieldKeywords, kind: kindList, required: true, label: "Keywords", typ: "list",
		question: "Which search terms should it use?"},
	{field: FieldCompetitors, kind: kindList, label: "Competitors", typ: "list, optional",
		question: "Which companies or organisations should it monitor? (optional)"},
	{field: FieldReportFrequency, kind: kindChoice, required: true, label: "Frequency", typ: "single-select; biweekly means every other week, not twice a month",
		question: "How often should the digest be posted?",
		choices:  frequencyChoices()},
	{field: FieldChannel, kind: kindChannel, defaulted: true, label: "Channel", typ: "Slack channel ID such as C0123ABCD, only one the user mentioned; optional, defaults to the channel the stream was created in",
		question: "Which channel should the digest be posted to? Mention it with #."},
	{field: FieldTimeOfDay, kind: kindClock, defaulted: true, label: "Time of day", typ: "HH:MM on a 24-hour clock; optional, defaults to 09:00",
		question: "At what time of day should the digest be posted?"},
	{field: FieldTimeZone, kind: kindZone, defaulted: true, label: "Time zone", typ: "IANA time zone name such as Europe/London; optional, defaults to the creator's Slack time zone",
		question: "Which time zone should the schedule use?"},
	{field: FieldWeekday, kind: kindChoice, defaulted: true, label: "Weekday", typ: "single-select, only for weekly and biweekly; optional, defaults to monday",
		question: "On which day of the week should the digest be posted?",
		choices:  weekdayNames},
	{field: FieldMonthDay, kind: kindMonthDay, defaulted: true, label: "Day of month", typ: "integer 1 to 31, only for monthly; 29-31 mean the last day in shorter months; optional, defaults to 1",
		question: "On which day of the month should the digest be posted? (29–31 mean the last day in shorter months.)"},
}

// Fields lists every field in workflow order.
func Fields() []SpecField {
	out := make([]SpecField, len(fieldDefs))
	for i, d := range fieldDefs {
		out[i] = d.field
	}
	return out
}

// lookupField returns the definition of f.
func lookupField(f SpecField) (fieldDef, bool) {
	for _, d := range fieldDefs {
		if d.field == f {
			return d, true
		}
	}
	return fieldDef{}, false
}

// Optional reports whether the user may skip f.
func (f SpecField) Optional() bool {
	d, ok := lookupField(f)
	return ok && !d.required
}

// IsList reports whether f holds a list of values.
func (f SpecField) IsList() bool {
	d, ok := lookupField(f)
	return ok && d.kind == kindList
}

// Label is the human name of f, for review lines and messages.
func (f SpecField) Label() string {
	if d, ok := lookupField(f); ok {
		return d.label
	}
	return string(f)
}

var (
	channelIDRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[CGD][A-Z0-9]{2,20}$`) })
	channelMentionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<#([CGD][A-Z0-9]{2,20})(\|[^<>]*)?>$`) })
)

// normalize validates v as a value of d and returns its canonical form.
func (d fieldDef) normalize(v FieldValue) (FieldValue, error) {
	out := FieldValue{Field: d.field}
	if d.kind == kindList {
		if strings.TrimSpace(v.Value) != "" {
			return out, d.errorf("it is a list: give its items in values, not value")
		}
		items, err := d.normalizeList(v.Values)
		out.Values = items
		return out, err
	}
	if len(v.Values) > 0 {
		return out, d.errorf("it takes a single value: give it in value, not values")
	}
	s, err := d.normalizeScalar(v.Value)
	out.Value = s
	return out, err
}

// normalizeList cleans list items: trims, drops empties and case-insensitive duplicates.
func (d fieldDef) normalizeList(in []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, raw := range in {
		s := cleanLine(raw)
		if s == "" {
			continue
		}
		if n := utf8.RuneCountInString(s); n > MaxItemLen {
			return nil, d.errorf("an item is %d characters long; the limit is %d", n, MaxItemLen)
		}
		if k := strings.ToLower(s); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, d.errorf("it needs at least one item")
	}
	if len(out) > MaxListItems {
		return nil, d.errorf("it has %d items; the limit is %d", len(out), MaxListItems)
	}
	return out, nil
}

// normalizeScalar validates a single value.
func (d fieldDef) normalizeScalar(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", d.errorf("it is empty")
	}
	switch d.kind {
	case kindText:
		s = cleanText(s)
		if n := utf8.RuneCountInString(s); n > MaxTextLen {
			return "", d.errorf("it is %d characters long; the limit is %d", n, MaxTextLen)
		}
	case kindName:
		s = cleanLine(s)
		if n := utf8.RuneCountInString(s); n > MaxNameLen {
			return "", d.errorf("it is %d characters long; the limit is %d", n, MaxNameLen)
		}
	case kindChoice:
		c := strings.ToLower(s)
		if d.field == FieldWeekday {
			c = canonicalWeekday(c)
		}
		if !slices.Contains(d.choices, c) {
			return "", d.errorf("%q is not one of: %s", truncate(s, 40), strings.Join(d.choices, ", "))
		}
		s = c
	case kindChannel:
		if m := channelMentionRE().FindStringSubmatch(s); m != nil {
			s = m[1]
		}
		if !channelIDRE().MatchString(s) {
			return "", d.errorf("%q is not a Slack channel; mention the channel with #", truncate(s, 40))
		}
	case kindClock:
		h, m, err := ParseTimeOfDay(s)
		if err != nil {
			return "", d.errorf("%q is not a time; use HH:MM on a 24-hour clock, e.g. 09:00", truncate(s, 40))
		}
		s = fmt.Sprintf("%02d:%02d", h, m)
	case kindZone:
		loc, err := LoadZone(s)
		if err != nil {
			return "", d.errorf("%q is not an IANA time zone such as Europe/London", truncate(s, 40))
		}
		s = loc.String()
	case kindMonthDay:
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 31 {
			return "", d.errorf("%q is not a day of the month from 1 to 31", truncate(s, 40))
		}
		s = strconv.Itoa(n)
	}
	return s, nil
}

func (d fieldDef) errorf(format string, args ...any) error {
	return &ValueError{Field: d.field, Reason: fmt.Sprintf(format, args...)}
}

// ValueError says why a value is not valid for a field. It wraps ErrInvalidValue.
type ValueError struct {
	Field  SpecField
	Reason string
}

// Error describes the problem in words fit for the user.
func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: %s", e.Field.Label(), e.Reason)
}

// Unwrap returns ErrInvalidValue.
func (e *ValueError) Unwrap() error { return ErrInvalidValue }

func canonicalWeekday(s string) string {
	for _, w := range weekdayNames {
		if s == w || (len(s) >= 3 && strings.HasPrefix(w, s)) {
			return w
		}
	}
	return s
}

func weekdayFromName(s string) time.Weekday {
	i := slices.Index(weekdayNames, s)
	if i < 0 {
		return time.Monday
	}
	return time.Weekday((i + 1) % 7)
}

func weekdayName(w time.Weekday) string {
	return weekdayNames[(int(w)+6)%7]
}

// cleanLine trims s and replaces control characters (including newlines) by spaces.
func cleanLine(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
}

// cleanText trims s and drops control characters other than newlines and tabs.
func cleanText(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return -1
		}
		return r
	}, s))
}

// truncate shortens s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
