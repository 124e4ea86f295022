package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestAskAnswersFromTheRunsSources runs a research in the terminal against
// the fakes, then asks about it: an answered question shows the answer, its
// sources and its checked citations; one the sources do not answer says so;
// `researchbot runs` shows the follow-ups and their cost, which the run's
// spend includes; bad requests get a clear error.
func TestAskAnswersFromTheRunsSources(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	ctx := context.Background()
	getenv := w.env(nil)
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"run", "--mode", "auto", "How well do heat pumps work in cold climates?"}, getenv, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	a := assemble(t, getenv, app.Options{})
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	id, before := runs[0].ID, runs[0].Spend.CostUSD

	ask := func(args ...string) (string, error) {
		t.Helper()
		var out, errb bytes.Buffer
		err := run(ctx, append([]string{"ask"}, args...), getenv, strings.NewReader(""), &out, &errb)
		return out.String() + errb.String(), err
	}
	got, err := ask(id, "What did [1] say about performance in the cold?")
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	for _, want := range []string{"The first source says", "Sources:\n[1] ", "1 of 1 citations checked", "follow-up " + id + ".f1"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "[99]") {
		t.Errorf("a citation of a source the report does not cite survived:\n%s", got)
	}
	got, err = ask(id, "How much "+researchtest.UnansweredTopic+" do heat pumps make?")
	if err != nil || !strings.Contains(got, "don't answer this") || !strings.Contains(got, "researchbot run ") {
		t.Errorf("unanswered: %v\n%s", err, got)
	}
	r, err := a.Engine.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.FollowUps) != 2 || r.Spend.CostUSD <= before {
		t.Errorf("follow-ups %d, spend %.6f → %.6f", len(r.FollowUps), before, r.Spend.CostUSD)
	}
	var list bytes.Buffer
	if err := run(ctx, []string{"runs"}, getenv, nil, &list, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list.String(), "[2 follow-ups, ") {
		t.Errorf("runs does not show the follow-ups:\n%s", list.String())
	}

	var exit *exitError
	if _, err := ask("r-nosuchrun", "What did [1] say about performance?"); !errors.As(err, &exit) || !strings.Contains(exit.msg, "no run r-nosuchrun") {
		t.Errorf("unknown run: %v", err)
	}
	if _, err := ask(id, "why?"); !errors.As(err, &exit) || exit.code != 2 {
		t.Errorf("short question: %v", err)
	}
	if _, err := ask(id); !errors.As(err, &exit) || exit.code != 2 {
		t.Errorf("no question: %v", err)
	}
}
