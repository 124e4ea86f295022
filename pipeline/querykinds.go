package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// QueryKinds are the kinds a query of a plan may have ("kind: text").
var QueryKinds = []string{"web", "academic", "news"}

// CheckQueryLine reports a line of an edited plan's queries that names a
// kind that does not exist ("blog: …"): it would otherwise be searched as
// a web query with the kind in its text. A prefix with spaces or capitals
// is taken as part of the query ("COVID-19: effects").
func CheckQueryLine(line string) error {
	k, _, ok := strings.Cut(line, ":")
	k = strings.TrimSpace(k)
	if !ok || k == "" || slices.Contains(QueryKinds, k) || strings.ToLower(k) != k || strings.ContainsAny(k, " \t") {
		return nil
	}
	for _, r := range k {
		if r < 'a' || r > 'z' {
			return nil
		}
	}
	return fmt.Errorf("%q is not a query type: use %s (or no type for a web query)", k, strings.Join(QueryKinds, ", "))
}
