// Package goldentest compares what a test rendered with a golden file, or
// rewrites the file when the test runs with -update. It is test support:
// product code never imports it.
//
// The -update flag stays with each test package (a flag registered here
// would collide with a package's own), which passes its value in.
package goldentest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Compare checks got against the file at path; with update it writes got
// there instead (creating the folder) and checks nothing.
func Compare(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (run with -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// JSON compares v, encoded as indented JSON without HTML escaping (as the
// Slack payload golden files are written), with the file at path.
func JSON(t testing.TB, path string, v any, update bool) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	Compare(t, path, buf.Bytes(), update)
}
