package scheduler

import (
	"embed"
	"encoding/json"
	"strings"
	"text/template"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// promptTemplates parses the embedded prompt templates. They are part of the binary,
// so a parse error is a programming error caught by the golden tests.
func promptTemplates() *template.Template {
	return template.Must(template.ParseFS(promptFS, "prompts/*.tmpl"))
}

// RenderPrompt renders the model's prompt for handling action a in conversation c
// (seed 003 §5). It is pure: the same input always gives the same prompt.
//
// The system prompt holds only trusted text: the workflow state (current step, valid
// next steps, whether a step was just completed, missing fields), the rules and the
// field definitions. Everything that comes from the user — the configuration, the
// history and the action — goes in the user prompt as one JSON document between
// <untrusted_user_data> markers, marked as data. JSON encoding escapes '<' and '>', so
// user text cannot close the block early.
func RenderPrompt(c Conversation, a ConversationAction) (system, user string) {
	after, eff, err := applyAction(c, a)
	if err != nil {
		after, eff = c, effect{}
	}

	type fieldInfo struct {
		Name     SpecField
		Type     string
		Required bool
		Choices  string
	}
	sys := struct {
		Step           ConversationStep
		Field          SpecField
		ValidNextSteps string
		CompletedField SpecField
		MissingFields  string
		Fields         []fieldInfo
		Retry          bool
	}{Step: after.Step, ValidNextSteps: joinSteps(after.NextSteps()), Retry: len(c.Rejected) > 0}
	sys.Field, _ = after.Step.Field()
	if eff.completed {
		sys.CompletedField = eff.set
	}
	if m := after.missing(); len(m) > 0 {
		names := make([]string, len(m))
		for i, f := range m {
			names[i] = string(f)
		}
		sys.MissingFields = strings.Join(names, ", ")
	}
	for _, d := range fieldDefs {
		sys.Fields = append(sys.Fields, fieldInfo{Name: d.field, Type: d.typ, Required: d.required,
			Choices: strings.Join(d.choices, ", ")})
	}

	data, _ := json.MarshalIndent(untrustedData{
		Config:  configEntries(after),
		History: historyEntries(c.History),
		Action:  actionData(c, a),
		Rejected: func() []string {
			var out []string
			for _, p := range c.Rejected {
				out = append(out, truncate(p, promptEntryLen))
			}
			return out
		}(),
	}, "", "  ")

	tmpl := promptTemplates()
	var sb, ub strings.Builder
	// The templates are embedded and their data is fixed above; execution cannot fail
	// once they parse, which the golden tests check.
	_ = tmpl.ExecuteTemplate(&sb, "system.tmpl", sys)
	_ = tmpl.ExecuteTemplate(&ub, "user.tmpl", struct{ Data string }{string(data)})
	return sb.String(), ub.String()
}

// untrustedData is the user-supplied part of the prompt.
type untrustedData struct {
	Config  []configEntry `json:"current_config"`
	History []Entry       `json:"conversation_history"`
	Action  actionEntry   `json:"user_action"`
	// Rejected is what was wrong with the model's previous proposal for this
	// action (it quotes model output, so it is data too).
	Rejected []string `json:"previous_proposal_problems,omitempty"`
}

// configEntry is one field of the configuration as shown to the model.
type configEntry struct {
	Field  SpecField `json:"field"`
	Status string    `json:"status"` // set, default, skipped, missing, not applicable
	Value  string    `json:"value,omitempty"`
	Values []string  `json:"values,omitempty"`
}

func configEntries(c Conversation) []configEntry {
	var out []configEntry
	for _, d := range fieldDefs {
		v := c.Spec.get(d.field)
		e := configEntry{Field: d.field, Value: v.Value, Values: v.Values}
		switch {
		case !c.Spec.relevant(d.field):
			e = configEntry{Field: d.field, Status: "not applicable"}
		case c.IsSettled(d.field) && isEmpty(v):
			e.Status = "skipped"
		case c.IsSettled(d.field):
			e.Status = "set"
		case !isEmpty(v):
			e.Status = "default"
		default:
			e.Status = "missing"
		}
		out = append(out, e)
	}
	return out
}

func historyEntries(h []Entry) []Entry {
	if len(h) > promptHistory {
		h = h[len(h)-promptHistory:]
	}
	out := make([]Entry, len(h))
	for i, e := range h {
		e.Text = truncate(e.Text, promptEntryLen)
		out[i] = e
	}
	return out
}

// actionEntry is the user's action as shown to the model (seed 003 §2).
type actionEntry struct {
	Type           ActionKind `json:"type"`
	TargetField    SpecField  `json:"target_field,omitempty"`
	SelectedValue  string     `json:"selected_value,omitempty"`
	SelectedValues []string   `json:"selected_values,omitempty"`
	Text           string     `json:"text,omitempty"`
}

func actionData(c Conversation, a ConversationAction) actionEntry {
	e := actionEntry{Type: a.Kind}
	switch a.Kind {
	case ActionOptionSelected:
		e.TargetField, e.SelectedValue = c.Last.TargetField, truncate(a.Value, MaxChoiceLen)
	case ActionOptionsSelected:
		e.TargetField = c.Last.TargetField
		for _, v := range a.Values {
			e.SelectedValues = append(e.SelectedValues, truncate(v, MaxChoiceLen))
		}
	case ActionSkipStep:
		e.TargetField, _ = c.Step.Field()
	case ActionTextInput:
		e.Text = truncate(cleanText(a.Text), MaxInputLen)
	}
	return e
}
