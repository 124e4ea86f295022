package goldentest

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

func TestCompareWritesThenChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "golden", "x.json")
	JSON(t, path, map[string]string{"text": "<b> & é"}, true)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"text\": \"<b> & é\"\n}\n"; string(b) != want {
		t.Fatalf("written %q, want %q (indented, no HTML escaping)", b, want)
	}
	same := &recorder{TB: t}
	JSON(same, path, map[string]string{"text": "<b> & é"}, false)
	if same.failed {
		t.Error("the same value differs from the file it wrote")
	}
	other := &recorder{TB: t}
	JSON(other, path, map[string]string{"text": "changed"}, false)
	if !other.failed {
		t.Error("a changed value matched the golden file")
	}
	missing := &recorder{TB: t}
	Compare(missing, filepath.Join(t.TempDir(), "none"), []byte("x"), false)
	if !missing.failed {
		t.Error("a missing golden file passed")
	}
}
