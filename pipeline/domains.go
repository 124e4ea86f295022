package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// MaxDomainRules is how many domains each list of a run's DomainRules may
// hold.
const MaxDomainRules = 50

// DomainRulesReason starts every refusal of a source by a run's domain
// rules, in the source list, the trace and the report.
const DomainRulesReason = "excluded by the run's domain rules"

// DomainRules say where a run's sources may come from: only the Only
// domains (when the list is not empty), never the Never domains. A domain
// matches itself and its subdomains ("example.org" matches
// "www.example.org"). They are applied in code to search results, to
// fetches and to every redirect a fetch follows, never in a prompt.
type DomainRules struct {
	Only  []string `json:"only,omitempty"`
	Never []string `json:"never,omitempty"`
}

// Empty reports whether the rules refuse nothing.
func (d DomainRules) Empty() bool { return len(d.Only) == 0 && len(d.Never) == 0 }

// Normalize returns the rules with every entry lower-cased and reduced to
// a host name (a pasted URL, a leading "*." or "." and a trailing dot are
// dropped), duplicates removed, in their given order. Its error names
// every bad entry: not a host name, in both lists, or over MaxDomainRules
// entries in a list.
func (d DomainRules) Normalize() (DomainRules, error) {
	var errs []error
	only, e1 := normalizeDomains("only", d.Only)
	never, e2 := normalizeDomains("never", d.Never)
	errs = append(errs, e1, e2)
	for _, n := range never {
		if slices.Contains(only, n) {
			errs = append(errs, fmt.Errorf("domain %q is in both the only and the never list", n))
		}
	}
	return DomainRules{Only: only, Never: never}, errors.Join(errs...)
}

func normalizeDomains(list string, in []string) ([]string, error) {
	var out []string
	var errs []error
	for _, raw := range in {
		d, err := normalizeDomain(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s domain %q: %w", list, clipText(raw, 80), err))
			continue
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > MaxDomainRules {
		errs = append(errs, fmt.Errorf("%d %s domains: at most %d are allowed", len(out), list, MaxDomainRules))
	}
	return out, errors.Join(errs...)
}

// normalizeDomain reduces one entry to a lower-case host name.
func normalizeDomain(raw string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return "", errors.New("not a domain name")
		}
		s = u.Hostname()
	}
	s = strings.TrimPrefix(s, "*.")
	s = strings.TrimPrefix(s, ".")
	s = strings.TrimSuffix(s, ".")
	if err := checkHostname(s); err != nil {
		return "", err
	}
	return s, nil
}

// checkHostname accepts an ASCII host name (letters, digits and hyphens in
// dot-separated labels of 1–63 characters, no label starting or ending with
// a hyphen, at most 253 characters). Internationalised names are given in
// their xn-- form.
func checkHostname(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > 253 {
		return errors.New("longer than 253 characters")
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("not a domain name (empty or over-long label)")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return errors.New("not a domain name (a label starts or ends with a hyphen)")
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("not a domain name (character %q)", c)
			}
		}
	}
	return nil
}

// Refusal says why the rules refuse a host ("" when they do not): the
// reason starts with DomainRulesReason and names the rule. A port and a
// trailing dot on host are ignored.
func (d DomainRules) Refusal(host string) string {
	if d.Empty() {
		return ""
	}
	h := strings.ToLower(strings.TrimSpace(host))
	if u, err := url.Parse("http://" + h); err == nil && u.Hostname() != "" {
		h = u.Hostname()
	}
	h = strings.TrimSuffix(h, ".")
	for _, n := range d.Never {
		if underDomain(h, n) {
			return DomainRulesReason + " (never " + n + ")"
		}
	}
	if len(d.Only) == 0 || slices.ContainsFunc(d.Only, func(o string) bool { return underDomain(h, o) }) {
		return ""
	}
	return DomainRulesReason + " (not in only " + strings.Join(d.Only, ", ") + ")"
}

// RefusalOfURL is Refusal for the host of a web (http or https) URL. The
// rules are about web sites: an address of another scheme (a result of an
// MCP server, mcp://server/id) is not refused; a web URL without a host is,
// when the rules are not empty.
func (d DomainRules) RefusalOfURL(raw string) string {
	if d.Empty() {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err == nil && u.Scheme != "" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https") {
		return ""
	}
	if err != nil || u.Hostname() == "" {
		return DomainRulesReason + " (no host in the URL)"
	}
	return d.Refusal(u.Hostname())
}

// String is the rules as one line: "only example.org · never spam.example"
// ("" for empty rules).
func (d DomainRules) String() string {
	var parts []string
	if len(d.Only) > 0 {
		parts = append(parts, "only "+strings.Join(d.Only, ", "))
	}
	if len(d.Never) > 0 {
		parts = append(parts, "never "+strings.Join(d.Never, ", "))
	}
	return strings.Join(parts, " · ")
}

func underDomain(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

type domainRulesKey struct{}

// WithDomainRules returns ctx carrying a run's domain rules, for the
// Fetcher: a fetch under it refuses a redirect the rules refuse.
func WithDomainRules(ctx context.Context, d DomainRules) context.Context {
	if d.Empty() {
		return ctx
	}
	return context.WithValue(ctx, domainRulesKey{}, d)
}

// DomainRulesFrom returns the domain rules ctx carries (WithDomainRules).
func DomainRulesFrom(ctx context.Context) (DomainRules, bool) {
	d, ok := ctx.Value(domainRulesKey{}).(DomainRules)
	return d, ok
}
