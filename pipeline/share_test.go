package pipeline

import "testing"

// TestShareableTo is the audience boundary for sharing a report: a table of
// the sources a run used × the audience it is shared with.
func TestShareableTo(t *testing.T) {
	const dm, person, channel, other = "D0ADA", "U0ADA", "C0TEAM", "C0OTHER"
	web := Source{ID: 1, Fetched: true}
	privateMsg := Source{ID: 2, Fetched: true, Kind: KindWorkspace, Visibility: Visibility{Conversation: "G0SECRET", Reader: person}}
	dmFile := Source{ID: 3, Fetched: true, Kind: KindFile, Visibility: Visibility{Conversation: dm, Reader: person}}
	channelMsg := Source{ID: 4, Fetched: true, Kind: KindWorkspace, Visibility: Visibility{Conversation: channel, Reader: person}}
	unread := Source{ID: 5, Visibility: Visibility{Conversation: "G0SECRET", Reader: person}} // a hit never read nor cited
	cited := Source{ID: 6, Visibility: Visibility{Conversation: "G0SECRET", Reader: person}}  // cited, not marked fetched
	for _, tc := range []struct {
		name     string
		sources  []Source
		pages    []Page
		refs     []Reference
		to       Audience
		ok       bool
		withheld int
	}{
		{name: "public sources to a channel", sources: []Source{web}, to: ChannelAudience(channel), ok: true},
		{name: "nothing used", to: ChannelAudience(channel), ok: true},
		{name: "a private-channel message", sources: []Source{web, privateMsg}, to: ChannelAudience(channel), withheld: 1},
		{name: "a file shared in the DM", sources: []Source{web, dmFile}, to: ChannelAudience(channel), withheld: 1},
		{name: "both private", sources: []Source{privateMsg, dmFile, web}, to: ChannelAudience(channel), withheld: 2},
		{name: "that channel's own message", sources: []Source{web, channelMsg}, to: ChannelAudience(channel), ok: true},
		{name: "that channel's message elsewhere", sources: []Source{channelMsg}, to: ChannelAudience(other), withheld: 1},
		{name: "a private hit never used", sources: []Source{web, unread}, to: ChannelAudience(channel), ok: true},
		{name: "a private source cited", sources: []Source{web, cited}, refs: []Reference{{N: 1, SourceID: 6}}, to: ChannelAudience(channel), withheld: 1},
		{name: "a private source marked relevant", sources: []Source{web, {ID: 7, Relevant: true, Visibility: privateMsg.Visibility}}, to: ChannelAudience(channel), withheld: 1},
		{name: "a private source marked relevant, then excluded", sources: []Source{web, {ID: 7, Relevant: true, Excluded: true, Visibility: privateMsg.Visibility}}, to: ChannelAudience(channel), ok: true},
		{name: "a private source read (page)", sources: []Source{web, unread}, pages: []Page{{SourceID: 5}}, to: ChannelAudience(channel), withheld: 1},
		{name: "a page of a file not in the list", pages: []Page{{SourceID: 9, File: "x.pdf", SharedIn: dm, SharedBy: person}}, to: ChannelAudience(channel), withheld: 1},
		{name: "the person alone", sources: []Source{privateMsg, dmFile}, to: PersonAudience(dm, person), ok: true},
		{name: "unknown audience", sources: []Source{web, dmFile}, to: Audience{}, withheld: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{Sources: tc.sources, Pages: tc.pages}
			if tc.refs != nil {
				r.Report = &Report{References: tc.refs}
			}
			ok, withheld := r.ShareableTo(tc.to)
			if ok != tc.ok || withheld != tc.withheld {
				t.Errorf("ShareableTo = %v, %d; want %v, %d", ok, withheld, tc.ok, tc.withheld)
			}
		})
	}
}
