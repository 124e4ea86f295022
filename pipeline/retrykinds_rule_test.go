package pipeline

import "testing"

// TestRetryKind: a poor search is retried with the model's kind when it
// differs and is served, else with the rule's, else (one kind served) in
// its own.
func TestRetryKind(t *testing.T) {
	all := []string{"web", "academic", "news"}
	for _, c := range []struct {
		old, proposed string
		served        []string
		want          string
	}{
		{"web", "news", all, "news"},
		{"web", "web", all, "academic"},
		{"web", "", all, "academic"},
		{"", "", all, "academic"},
		{"academic", "academic", all, "web"},
		{"news", "News", all, "web"},
		{"web", "news", []string{"web", "academic"}, "academic"},
		{"web", "academic", []string{"web", "news"}, "news"},
		{"academic", "", []string{"news", "academic"}, "news"},
		{"web", "academic", []string{"web"}, "web"},
	} {
		if got := retryKind(c.old, c.proposed, c.served); got != c.want {
			t.Errorf("retryKind(%q, %q, %v) = %q, want %q", c.old, c.proposed, c.served, got, c.want)
		}
	}
}
