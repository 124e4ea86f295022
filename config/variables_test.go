package config

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the configuration table of docs/configuration.md from Variables")

// TestLoadReadsExactlyTheTable: every variable Load asks for has a row in
// the table, and every row names variables Load reads.
func TestLoadReadsExactlyTheTable(t *testing.T) {
	asked := map[string]bool{}
	_, _ = Load(func(k string) string { asked[k] = true; return "" })
	documented := map[string]bool{}
	for _, v := range Variables() {
		for _, n := range v.Names {
			if documented[n] {
				t.Errorf("%s has two rows", n)
			}
			documented[n] = true
			if !asked[n] {
				t.Errorf("%s is in the table but Load never reads it", n)
			}
		}
	}
	for n := range asked {
		if !documented[n] {
			t.Errorf("Load reads %s, which has no row in the table", n)
		}
	}
}

// TestDocumentedDefaultsAreTheDefaults: setting a variable to the default
// the table states changes nothing.
func TestDocumentedDefaultsAreTheDefaults(t *testing.T) {
	want, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range Variables() {
		if v.Default == "" {
			continue
		}
		for _, name := range v.Names {
			got, err := Load(env(map[string]string{name: v.Default}))
			if err != nil {
				t.Errorf("%s=%s (its documented default) is refused: %v", name, v.Default, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s=%s (its documented default) changes the configuration", name, v.Default)
			}
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d defaults checked", n)
	}
}

// TestREADMEConfigurationTable: the table of docs/configuration.md (linked
// from the README) is MarkdownTable's output (go test ./config -update
// rewrites it).
func TestREADMEConfigurationTable(t *testing.T) {
	const path = "../docs/configuration.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "| variable | default | meaning |\n")
	if start < 0 {
		t.Fatal(path + " has no configuration table")
	}
	end := strings.Index(readme[start:], "\n\n")
	if end < 0 {
		t.Fatal(path + "'s configuration table does not end")
	}
	end += start + 1
	want := MarkdownTable()
	if got := readme[start:end]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(readme[:start]+want+readme[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		gotRows, wantRows := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(gotRows), len(wantRows)) {
			g, w := "", ""
			if i < len(gotRows) {
				g = gotRows[i]
			}
			if i < len(wantRows) {
				w = wantRows[i]
			}
			if g != w {
				t.Errorf(path+" row %d differs from config.Variables (go test ./config -update rewrites it):\n got %s\nwant %s", i, g, w)
				break
			}
		}
	}
}

func TestShowMasksSecrets(t *testing.T) {
	vars := Variables()
	byName := func(n string) Variable {
		i := slices.IndexFunc(vars, func(v Variable) bool { return slices.Contains(v.Names, n) })
		return vars[i]
	}
	for _, tc := range []struct{ name, value, want string }{
		{"SLACK_BOT_TOKEN", "xoxb-123-456-abcdef", "xoxb-… (19 characters, masked)"},
		{"OPENAI_API_KEY", "sk-proj-abcdefghijkl", "sk-… (20 characters, masked)"},
		{"TAVILY_API_KEY", "tvlyabcdefgh", "… (12 characters, masked)"},
		{"REDIS_URL", "redis://:hunter2@redis:6379/0", "redis://:xxxxx@redis:6379/0"},
		{"REDIS_URL", "redis://redis:6379/0", "redis://redis:6379/0"},
		{"LLM_MODEL", "gpt-4o", "gpt-4o"},
	} {
		got := byName(tc.name).Show(tc.value)
		if got != tc.want {
			t.Errorf("%s=%q shows as %q, want %q", tc.name, tc.value, got, tc.want)
		}
		if byName(tc.name).Secret && strings.Contains(got, "hunter2") || strings.Contains(got, "abcdef") {
			t.Errorf("%s shows its secret: %q", tc.name, got)
		}
	}
}

// MarkdownTable renders the table of docs/configuration.md.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n| --- | --- | --- |\n")
	for _, v := range Variables() {
		names := make([]string, len(v.Names))
		for i, n := range v.Names {
			names[i] = "`" + n + "`"
		}
		def := "—"
		switch {
		case v.DefaultText != "":
			def = v.DefaultText
		case v.Default != "":
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(names, ", "), def, v.Meaning)
	}
	return b.String()
}
