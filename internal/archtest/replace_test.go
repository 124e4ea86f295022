package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// localReplacements returns the directories go.mod replaces modules with
// (the stand-ins under internal/), relative to the repository's root.
func localReplacements(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Replace []struct {
			Old, New struct{ Path string }
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, r := range mod.Replace {
		if strings.HasPrefix(r.New.Path, "./") || strings.HasPrefix(r.New.Path, "../") {
			dirs = append(dirs, filepath.Clean(r.New.Path))
		}
	}
	return dirs
}

// TestDockerfileMountsEveryReplacement keeps the image buildable: the
// Dockerfile downloads the modules with only go.mod and go.sum bound into
// the build, and `go mod download` fails on a replacement directory it
// cannot see, so each must be bound there too.
func TestDockerfileMountsEveryReplacement(t *testing.T) {
	dirs := localReplacements(t)
	if len(dirs) == 0 {
		t.Fatal("go.mod replaces no module with a directory: the stand-ins of internal/ are gone, or this test reads go.mod wrongly")
	}
	dockerfile, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if mount := "--mount=type=bind,source=" + dir + ",target=" + dir; !strings.Contains(string(dockerfile), mount) {
			t.Errorf("go.mod replaces a module with %s, but the Dockerfile's go mod download does not bind it (%s)", dir, mount)
		}
	}
}
