package terminal

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// NeverDomainFunc takes a domain out of a run at its source review
// (pipeline.Engine.NeverDomain).
type NeverDomainFunc func(ctx context.Context, instanceID, by, domain string) (*pipeline.Run, string, error)

// offersNever reports whether "never N" is an answer at inst.
func (p *Prompter) offersNever(inst checkpoints.Instance) bool {
	return p.NeverDomain != nil && inst.ControlType == checkpoints.SourceReview
}

// neverCommand recognises "never N" (or "n N"), returning N as typed.
func neverCommand(ans string) (string, bool) {
	f := strings.Fields(strings.ToLower(ans))
	if len(f) == 2 && f[0] == "never" {
		return f[1], true
	}
	return "", false
}

// never takes the site of the listed source numbered arg out of the run,
// says what was done and that nothing is saved beyond this run, and shows
// the source review again without it (inst is updated).
func (p *Prompter) never(ctx context.Context, inst *checkpoints.Instance, arg string) {
	var payload pipeline.SourcesPayload
	_ = json.Unmarshal(inst.Payload, &payload)
	n, err := strconv.Atoi(arg)
	domain := ""
	for _, s := range payload.Sources {
		if err == nil && s.ID == n {
			domain = s.Domain
		}
	}
	if domain == "" {
		p.printf("There is no listed source [%s]; type never and the number in brackets before a source.\n", Clean(arg))
		return
	}
	r, d, err := p.NeverDomain(ctx, inst.ID, p.By, domain)
	if err != nil {
		p.printf("%s\n", p.Style.Error("Could not stop using "+Clean(domain)+": "+Clean(err.Error())))
		return
	}
	taken := 0
	for _, s := range r.Sources {
		if strings.HasPrefix(s.FetchErr, pipeline.NeverDomainReason) && strings.HasSuffix(s.FetchErr, "(never "+d+")") {
			taken++
		}
	}
	p.printf("Never using %s in this run (sources taken out: %d); no later step reads it, and the report records it.\n"+
		"Nothing is saved beyond this run: to leave it out next time, pass --never-domain %s.\n", Clean(d), taken, Clean(d))
	if cur := r.Current(); cur != nil && cur.ID == inst.ID {
		*inst = *cur
		_, _ = io.WriteString(p.out, p.Style.Checkpoint(*inst))
	}
}
