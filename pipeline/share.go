package pipeline

// ShareableTo reports whether what r wrote (its report) may be shown to
// audience a as well as to its own: every source the run used — each page it
// read (a fetched page, a shared file, a workspace message), each source its
// report cites, and each one a person marked relevant (the report lists it
// under "also relevant") — is one everyone in a could already read
// (Audience.Permits). withheld counts the used sources a could not read; it
// is 0 when ok. A run that used nothing is shareable; the zero Audience
// admits public sources only (fail closed), like a run's own.
//
// It is the audience boundary (architecture invariant 12) applied again
// when a report written for one person is offered to a channel: a report
// may repeat what a private source said, so one such source is enough to
// refuse.
func (r *Run) ShareableTo(a Audience) (ok bool, withheld int) {
	used := map[int]bool{}
	for _, s := range r.Sources {
		if s.Fetched || (s.Relevant && !s.Excluded) {
			used[s.ID] = true
		}
	}
	for _, p := range r.Pages {
		used[p.SourceID] = true
	}
	if r.Report != nil {
		for _, ref := range r.Report.References {
			used[ref.SourceID] = true
		}
	}
	known := map[int]bool{}
	for _, s := range r.Sources {
		known[s.ID] = true
		if used[s.ID] && !a.Permits(s.Visibility) {
			withheld++
		}
	}
	// A page whose source is not in the run's list (a file read before the
	// list had it) is judged by what the page says of where it was shared.
	for _, p := range r.Pages {
		if known[p.SourceID] || (p.SharedIn == "" && p.SharedBy == "") {
			continue
		}
		known[p.SourceID] = true
		if !a.Permits(Visibility{Conversation: p.SharedIn, Reader: p.SharedBy}) {
			withheld++
		}
	}
	return withheld == 0, withheld
}
