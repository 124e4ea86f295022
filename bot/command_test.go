package bot

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

func TestParseCommand(t *testing.T) {
	cases := []struct {
		in   string
		want Command
		err  string // substring of the UsageError
	}{
		{in: "", want: Command{Kind: CmdStart}},
		{in: "   ", want: Command{Kind: CmdStart}},
		{in: "help", want: Command{Kind: CmdHelp}},
		{in: "HELP", want: Command{Kind: CmdHelp}},
		{in: "list", want: Command{Kind: CmdList}},
		{in: "status", want: Command{Kind: CmdStatus}},
		{in: "status r-123", want: Command{Kind: CmdStatus, RunID: "r-123"}},
		{in: "cancel", want: Command{Kind: CmdCancel}},
		{in: "cancel r-9", want: Command{Kind: CmdCancel, RunID: "r-9"}},
		{in: "stream create weekly AI news", want: Command{Kind: CmdResearch, Question: "stream create weekly AI news", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "stream new", want: Command{Kind: CmdStream, Args: "new"}},
		{in: "Stream LIST", want: Command{Kind: CmdStream, Args: "LIST"}},
		{in: "streams", want: Command{Kind: CmdStream}},
		{in: "stream", want: Command{Kind: CmdStream}},
		{in: "stream show", want: Command{Kind: CmdStream, Args: "show"}},
		{in: "stream show Weekly AI", want: Command{Kind: CmdStream, Args: "show Weekly AI"}},
		{in: "stream edit Weekly AI", want: Command{Kind: CmdStream, Args: "edit Weekly AI"}},
		{in: "stream policy Weekly AI hold_draft", want: Command{Kind: CmdStream, Args: "policy Weekly AI hold_draft"}},
		{in: "stream policy changes in the EU", want: Command{Kind: CmdResearch, Question: "stream policy changes in the EU", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "stream processing frameworks compared", want: Command{Kind: CmdResearch, Question: "stream processing frameworks compared", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "streams of revenue for open source", want: Command{Kind: CmdResearch, Question: "streams of revenue for open source", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "stream list of the best codecs", want: Command{Kind: CmdResearch, Question: "stream list of the best codecs", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "-- stream list now", want: Command{Kind: CmdResearch, Question: "stream list now", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "status of the EU AI act", want: Command{Kind: CmdResearch, Question: "status of the EU AI act", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "stream policy", want: Command{Kind: CmdStream, Args: "policy"}},
		{in: "cancel my subscription options", want: Command{Kind: CmdResearch, Question: "cancel my subscription options", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "list", want: Command{Kind: CmdList}},
		{in: "help", want: Command{Kind: CmdHelp}},
		{in: "what is RAG?", want: Command{Kind: CmdResearch, Question: "what is RAG?", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "--mode full --depth quick what is RAG?", want: Command{Kind: CmdResearch, Question: "what is RAG?", Mode: "full", Depth: pipeline.DepthQuick}},
		{in: "what is RAG? --depth=comprehensive --mode=auto", want: Command{Kind: CmdResearch, Question: "what is RAG?", Mode: "auto", Depth: pipeline.DepthComprehensive}},
		{in: "what --mode AUTO is RAG", want: Command{Kind: CmdResearch, Question: "what is RAG", Mode: "auto", Depth: pipeline.DepthStandard}},
		{in: "list the main risks of RAG", want: Command{Kind: CmdResearch, Question: "list the main risks of RAG", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "help me understand RAG", want: Command{Kind: CmdResearch, Question: "help me understand RAG", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "-- list the risks", want: Command{Kind: CmdResearch, Question: "list the risks", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "-- list", err: "too short to research (it needs at least 10 characters)"},
		{in: "--depth quick -- --mode is a flag", want: Command{Kind: CmdResearch, Question: "--mode is a flag", Mode: "guided", Depth: pipeline.DepthQuick}},
		{in: "status of fusion power in 2025", want: Command{Kind: CmdResearch, Question: "status of fusion power in 2025", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "--review-sources what is RAG?", want: Command{Kind: CmdResearch, Question: "what is RAG?", Mode: "guided", Depth: pipeline.DepthStandard, ReviewSources: true}},
		{in: "--review-sources=yes what is RAG?", err: "don't know the option"},
		{in: "--only-domain example.org,https://Docs.Example.net/x --never-domain <http://spam.example|spam.example> --never-domain=ads.example.org what is RAG?", want: Command{Kind: CmdResearch, Question: "what is RAG?", Mode: "guided", Depth: pipeline.DepthStandard,
			Domains: pipeline.DomainRules{Only: []string{"example.org", "docs.example.net"}, Never: []string{"spam.example", "ads.example.org"}}}},
		{in: "--never-domain bad_one what is RAG?", err: `never domain "bad_one": not a domain name`},
		{in: "what is RAG? --only-domain", err: "needs a value"},
		{in: "--mode turbo what", err: "must be auto, guided or full"},
		{in: "--depth deep what", err: "must be quick, standard or comprehensive"},
		{in: "--dept quick what", err: "don't know the option"},
		{in: "what --mode", err: "needs a value"},
		{in: "--mode full", err: "What should I research"},
		{in: strings.Repeat("é", blockkit.MaxQuestionRunes+1), err: "the limit is 2000"},
		{in: "what is \u202eRAG\u202c\u200b?\x1b[0m", want: Command{Kind: CmdResearch, Question: "what is RAG?[0m", Mode: "guided", Depth: pipeline.DepthStandard}},
		{in: "\u200b\u2066\u2069\x00", want: Command{Kind: CmdStart}},
		{in: "--mode full \U000E0069\U000E0067", err: "What should I research"},
	}
	for _, c := range cases {
		got, err := ParseCommand(c.in)
		if c.err != "" {
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(ue.Msg, c.err) {
				t.Errorf("ParseCommand(%.40q) error = %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCommand(%.40q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCommand(%.40q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseCommandAcceptsTheLongestQuestion(t *testing.T) {
	q := strings.Repeat("é", blockkit.MaxQuestionRunes)
	c, err := ParseCommand(q)
	if err != nil || c.Question != q {
		t.Fatalf("a %d-rune question: %v", blockkit.MaxQuestionRunes, err)
	}
}

func TestUsageErrorsEscapeWhatWasTyped(t *testing.T) {
	_, err := ParseCommand("--<!channel> x")
	if err == nil || strings.Contains(err.Error(), "<!channel>") {
		t.Fatalf("error = %v; want an escaped option name", err)
	}
}
