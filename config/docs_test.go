package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDocsDirsSplitLikePATH(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	c, err := Load(env(map[string]string{"DOCS_DIR": a + string(os.PathListSeparator) + b + string(os.PathListSeparator) + a, "DOCS_INDEX_DIR": filepath.Join(b, "idx")}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.DocsDirs) != 2 || c.DocsDirs[0] != a || c.DocsDirs[1] != b {
		t.Errorf("DocsDirs = %q", c.DocsDirs)
	}
	if c.DocsIndexDir != filepath.Join(b, "idx") || c.DocsCheckInterval != 10*time.Minute {
		t.Errorf("index dir %q, interval %s", c.DocsIndexDir, c.DocsCheckInterval)
	}
}

func TestDocsIndexDirDefaultsToTheUserCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	c, err := Load(env(map[string]string{"DOCS_DIR": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "researchbot", "docs-index"); c.DocsIndexDir != want {
		t.Errorf("DocsIndexDir = %q, want %q", c.DocsIndexDir, want)
	}
	if c, _ := Load(env(nil)); c.DocsDirs != nil || c.DocsIndexDir != "" {
		t.Errorf("no collection: %q %q", c.DocsDirs, c.DocsIndexDir)
	}
}

func TestDocsSettingsRefuseWhatCannotBeUsed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(env(map[string]string{"DOCS_DIR": "/no/such/folder:" + file, "DOCS_CHECK_INTERVAL": "5s"}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`DOCS_DIR: "/no/such/folder" is not a readable folder`, `is not a folder`, "DOCS_CHECK_INTERVAL: want between 1m0s and 24h0m0s, got 5s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
