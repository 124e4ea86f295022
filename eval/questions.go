package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Set is a list of evaluation questions.
type Set struct {
	Questions []Question `json:"questions"`
}

// Question is one evaluation question over the collection.
type Question struct {
	// ID names the question in tables ("mime-weights").
	ID       string `json:"id"`
	Question string `json:"question"`
	// Documents are the collection's documents that hold the answer, as
	// slash-separated paths within the collection folder.
	Documents []string `json:"documents"`
	// Facts are what a correct report states.
	Facts []Fact `json:"facts"`
}

// Fact is one thing a correct report states: Pattern is a regular
// expression (Go syntax, matched without regard to case) over the
// report's prose.
type Fact struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`

	re *regexp.Regexp
}

// Match reports whether text states the fact.
func (f Fact) Match(text string) bool {
	if f.re == nil {
		return false
	}
	return f.re.MatchString(text)
}

//go:embed questions.json
var builtinQuestions []byte

// Builtin returns the built-in questions over the built-in corpus.
func Builtin() Set {
	s, err := ParseQuestions(builtinQuestions)
	if err != nil {
		panic("eval: the built-in questions do not parse: " + err.Error())
	}
	return s
}

// ParseQuestions reads a questions file (JSON, shaped as questions.json).
// Its error names every problem: unknown fields, a question without an id,
// text, document or fact, a duplicate id, a pattern that does not compile.
func ParseQuestions(b []byte) (Set, error) {
	var s Set
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Set{}, fmt.Errorf("not a questions file: %w", err)
	}
	var errs []error
	if len(s.Questions) == 0 {
		errs = append(errs, errors.New("no questions"))
	}
	seen := map[string]bool{}
	for i := range s.Questions {
		q := &s.Questions[i]
		name := fmt.Sprintf("question %d", i+1)
		if q.ID != "" {
			name += fmt.Sprintf(" (%s)", q.ID)
		}
		switch {
		case strings.TrimSpace(q.ID) == "":
			errs = append(errs, fmt.Errorf("%s: no id", name))
		case seen[q.ID]:
			errs = append(errs, fmt.Errorf("%s: the id is used twice", name))
		}
		seen[q.ID] = true
		if strings.TrimSpace(q.Question) == "" {
			errs = append(errs, fmt.Errorf("%s: no question", name))
		}
		if len(q.Documents) == 0 {
			errs = append(errs, fmt.Errorf("%s: no documents (the paths in the collection that hold the answer)", name))
		}
		for j, d := range q.Documents {
			clean := path.Clean(strings.TrimPrefix(d, "/"))
			if d == "" || clean == "." || strings.HasPrefix(clean, "../") {
				errs = append(errs, fmt.Errorf("%s: document %q is not a path within the collection", name, d))
			}
			q.Documents[j] = clean
		}
		if len(q.Facts) == 0 {
			errs = append(errs, fmt.Errorf("%s: no facts", name))
		}
		for j := range q.Facts {
			f := &q.Facts[j]
			if strings.TrimSpace(f.Name) == "" {
				f.Name = f.Pattern
			}
			if f.Pattern == "" {
				errs = append(errs, fmt.Errorf("%s: fact %q: no pattern", name, f.Name))
				continue
			}
			re, err := regexp.Compile("(?i)" + f.Pattern)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: fact %q: the pattern is not a regular expression: %w", name, f.Name, err))
				continue
			}
			f.re = re
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Set{}, err
	}
	return s, nil
}
