package checkpoints

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a definition, chosen so that every definition fits Slack's Block
// Kit limits where it is shown (the checkpoint message, the Edit modal, the
// App Home) and stays small in Redis, where each guided run keeps a snapshot
// of the definitions it met. Lengths are in characters (runes).
const (
	MaxLabelLength       = 150  // a definition's label: a header line (Block Kit header text ≤ 150)
	MaxDescriptionLength = 3000 // a definition's description: one section (section text ≤ 3000)
	MaxFields            = 50   // fields of a form: one input block each, within a modal's 100 blocks beside the payload
	MaxModes             = 20   // applicable modes
	MaxFieldLabelLength  = 2000 // a field's label (input label ≤ 2000)
	MaxHelpLength        = 2000 // a field's help (input hint ≤ 2000)
	MaxPlaceholderLength = 150  // a field's placeholder (placeholder ≤ 150)
	MaxOptions           = 100  // options of a field (static select ≤ 100)
	MaxOptionLabelLength = 75   // an option's label (option text ≤ 75)
	MaxOptionValueLength = 150  // an option's value, and a free tag of a chips default (option value ≤ 150)
	MaxTextLength        = defaultMaxLength
)

// boundProblems lists where d exceeds a bound or holds characters a
// definition may not: every count, every length, and every text checked by
// textProblem. Lists longer than their bound are reported once, and only
// their first items are looked at further (definitionProblems does the
// same), so a definition of 10,000 options costs no more than one of 100.
func boundProblems(d Definition) []Problem {
	var ps []Problem
	add := func(p *Problem) {
		if p != nil {
			ps = append(ps, *p)
		}
	}
	add(textProblem("label", d.Label, MaxLabelLength, false))
	add(textProblem("description", d.Description, MaxDescriptionLength, true))
	add(countProblem("applicable_modes", "modes", len(d.Modes), MaxModes))
	add(countProblem("field_schema", "fields", len(d.Fields), MaxFields))
	return ps
}

// fieldBoundProblems is boundProblems for one field, with paths relative to
// the field (".options[1].label").
func fieldBoundProblems(f Field) []Problem {
	var ps []Problem
	add := func(p *Problem) {
		if p != nil {
			ps = append(ps, *p)
		}
	}
	add(textProblem(".label", f.Label, MaxFieldLabelLength, false))
	add(textProblem(".help", f.Help, MaxHelpLength, true))
	add(textProblem(".placeholder", f.Placeholder, MaxPlaceholderLength, false))
	add(countProblem(".options", "options", len(f.Options), MaxOptions))
	for i, o := range f.Options[:min(len(f.Options), MaxOptions)] {
		add(textProblem(fmt.Sprintf(".options[%d].value", i), o.Value, MaxOptionValueLength, false))
		add(textProblem(fmt.Sprintf(".options[%d].label", i), o.Label, MaxOptionLabelLength, false))
	}
	if f.MaxLength > MaxTextLength {
		add(&Problem{Path: ".max_length", Message: fmt.Sprintf("max length %d is more than %d", f.MaxLength, MaxTextLength)})
	}
	add(defaultProblem(f))
	return ps
}

// defaultProblem checks the text in a field's default: a string, or a list
// of at most MaxOptions strings (each a choice or a free tag, at most
// MaxOptionValueLength). Whether the default is a valid value of the field
// is fieldProblems' check.
func defaultProblem(f Field) *Problem {
	switch v := f.Default.(type) {
	case string:
		return textProblem(".default", v, MaxTextLength, f.Type == FieldTextarea)
	case []string:
		return listProblem(len(v), func(i int) (string, bool) { return v[i], true })
	case []any:
		return listProblem(len(v), func(i int) (string, bool) { s, ok := v[i].(string); return s, ok })
	}
	return nil
}

// listProblem checks a list default of n items, item(i) giving each.
func listProblem(n int, item func(i int) (string, bool)) *Problem {
	if p := countProblem(".default", "items", n, MaxOptions); p != nil {
		return p
	}
	for i := range n {
		if s, ok := item(i); ok {
			if p := textProblem(fmt.Sprintf(".default[%d]", i), s, MaxOptionValueLength, false); p != nil {
				return p
			}
		}
	}
	return nil
}

// countProblem reports a list at path of n items (what) above limit.
func countProblem(path, what string, n, limit int) *Problem {
	if n <= limit {
		return nil
	}
	return &Problem{Path: path, Message: fmt.Sprintf("%s: %d %s is too many (at most %d)", strings.TrimPrefix(path, "."), n, what, limit)}
}

// textProblem reports what is wrong with the text s at path: longer than
// limit characters, invalid UTF-8, or holding a character that could change
// how a screen shows it. Refused are control characters (C0, DEL and C1:
// NUL, ESC and so every terminal escape sequence, CSI, OSC, carriage
// return, backspace; newline and tab only where multiline) and the bidi
// controls (embeddings, overrides, isolates, marks), which reorder the text
// around them. The message names the first such character and where it is.
func textProblem(path, s string, limit int, multiline bool) *Problem {
	name := strings.TrimPrefix(path, ".")
	if !utf8.ValidString(s) {
		return &Problem{Path: path, Message: name + " is not valid UTF-8"}
	}
	n := 0
	for _, r := range s {
		n++
		switch {
		case (r == '\n' || r == '\t') && multiline:
		case unicode.Is(unicode.Cc, r):
			return &Problem{Path: path, Message: fmt.Sprintf("%s holds the control character %U at character %d: remove it (text may not hold control characters%s)", name, r, n, multilineNote(multiline))}
		case unicode.Is(unicode.Bidi_Control, r):
			return &Problem{Path: path, Message: fmt.Sprintf("%s holds the bidirectional control %U at character %d: remove it (it reorders how the text is shown)", name, r, n)}
		}
	}
	if n > limit {
		return &Problem{Path: path, Message: fmt.Sprintf("%s is %d characters long (at most %d)", name, n, limit)}
	}
	return nil
}

// multilineNote says which control characters a multiline text may hold.
func multilineNote(multiline bool) string {
	if multiline {
		return " other than newline and tab"
	}
	return ", newlines included"
}
