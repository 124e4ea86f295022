package streams

import (
	"context"
	"strings"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// streamDomainsUsage explains "/research stream domains".
const streamDomainsUsage = "Write `/research stream domains NAME --only-domain example.org --never-domain spam.example` (both repeat and take comma lists; they replace the stream's lists), or `/research stream domains NAME --clear` to drop them."

// setDomains handles "/research stream domains NAME [--only-domain D]
// [--never-domain D] | --clear": the stream's domain rules, which every
// digest applies, replaced by the owner or an admin.
func (s *Feature) setDomains(ctx context.Context, cmd bot.StreamCommand, args string) error {
	name, rules, clearAll, problem := parseStreamDomains(args)
	switch {
	case problem != "":
		return bot.Tell(blockkit.RenderError(problem, streamDomainsUsage), "Nothing was changed")
	case name == "":
		return bot.Tell(blockkit.RenderError("Which stream?", streamDomainsUsage), "Which stream?")
	case rules.Empty() && !clearAll:
		return bot.Tell(blockkit.RenderError("Which sites?", streamDomainsUsage+" `/research stream show NAME` shows the lists."), "Which sites?")
	}
	st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) {
		return s.svc.SetDomains(ctx, name, cmd.UserID, admin, rules)
	})
	if err != nil {
		var bad error
		if _, nerr := rules.Normalize(); nerr != nil {
			bad = nerr
		}
		if bad != nil {
			return bot.Tell(blockkit.RenderError("I can't use these sites: "+blockkit.EscapeTruncate(bad.Error(), 500), "Nothing was changed."), "Nothing was changed")
		}
		return bot.Tell(s.changeProblem(ctx, err, name, "change"), "Nothing was changed")
	}
	what := "Domain rules cleared for"
	if !st.Domains.Empty() {
		what = "Sources `" + blockkit.EscapeTruncate(st.Domains.String(), 1500) + "` set for"
	}
	s.respond(ctx, cmd, blockkit.RenderStreamChanged(st, what), "Done")
	return nil
}

// parseStreamDomains splits "NAME --only-domain a,b --never-domain c" (or
// "NAME --clear").
func parseStreamDomains(args string) (name string, rules pipeline.DomainRules, clearAll bool, problem string) {
	words := strings.Fields(args)
	var nameWords []string
	for i := 0; i < len(words); i++ {
		w := strings.ToLower(words[i])
		switch w {
		case "--clear":
			clearAll = true
			continue
		case "--only-domain", "--never-domain":
			if i+1 >= len(words) {
				return "", rules, false, "`" + w + "` needs a site after it."
			}
			i++
			if w == "--only-domain" {
				rules.Only = append(rules.Only, bot.SplitDomains(words[i])...)
			} else {
				rules.Never = append(rules.Never, bot.SplitDomains(words[i])...)
			}
			continue
		}
		if strings.HasPrefix(w, "--") {
			return "", rules, false, "I don't know the option `" + blockkit.EscapeTruncate(w, 40) + "`."
		}
		if !rules.Empty() || clearAll {
			return "", rules, false, "Put the stream's name before the options."
		}
		nameWords = append(nameWords, words[i])
	}
	if clearAll && !rules.Empty() {
		return "", rules, false, "`--clear` drops both lists; give it alone."
	}
	return strings.Join(nameWords, " "), rules, clearAll, ""
}
