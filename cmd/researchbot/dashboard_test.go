package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGrafanaDashboardQueriesMetricsThatExist: the sample dashboard in
// deploy/grafana is valid JSON, and every researchbot metric its queries
// name is one the code defines (in internal/obs or the Slack adapter).
func TestGrafanaDashboardQueriesMetricsThatExist(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/researchbot-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	defined := map[string]bool{}
	nameRe := regexp.MustCompile(`"(researchbot_[a-z_]+)"`)
	for _, dir := range []string{"../../internal/obs", "../../bot"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range nameRe.FindAllStringSubmatch(string(src), -1) {
				defined[m[1]] = true
			}
		}
	}
	if len(defined) < 15 {
		t.Fatalf("found only %d metric definitions: %v", len(defined), defined)
	}
	used := regexp.MustCompile(`researchbot_[a-z_]+`)
	queried := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, name := range used.FindAllString(tg.Expr, -1) {
				base := name
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					if b, ok := strings.CutSuffix(name, suffix); ok && defined[b] {
						base = b
					}
				}
				if !defined[base] {
					t.Errorf("panel %q queries %s, which the code does not define", p.Title, name)
				}
				queried++
			}
		}
	}
	t.Logf("%d panels, %d metric references, all defined", len(dash.Panels), queried)
}
