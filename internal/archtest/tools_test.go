package archtest

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../.."

var (
	// execName finds the program named by a string literal in
	// exec.Command, exec.CommandContext or exec.LookPath.
	execName = regexp.MustCompile(`exec\.(?:Command|CommandContext|LookPath)\(\s*(?:ctx,\s*)?"([^"]+)"`)
	// shebang finds the interpreter of a script a test writes.
	shebang = regexp.MustCompile(`#!\s*(?:/usr)?/bin/(?:env\s+)?([A-Za-z0-9_.-]+)`)
)

// listedTools reads the first column of .ci/tools: the programs .ci/run
// installs and .ci/check-tools requires.
func listedTools(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, ".ci", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tools []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 3 {
			t.Errorf(".ci/tools: %q needs a program, its Debian packages and why", s.Text())
		}
		tools = append(tools, fields[0])
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return tools
}

// programsRun returns every program the repository's Go files run by a
// literal name, and the interpreters of the scripts they write, each with a
// file that does it.
func programsRun(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		for _, re := range []*regexp.Regexp{execName, shebang} {
			for _, m := range re.FindAllSubmatch(src, -1) {
				name := string(m[1])
				if _, ok := found[name]; !ok {
					found[name] = rel
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestEveryProgramTheTestsRunIsListed: a program a test (or the code it
// tests) runs by name must be in .ci/tools, so that .ci/run installs it on a
// fresh machine and .ci/check-tools fails CI when it is missing.
func TestEveryProgramTheTestsRunIsListed(t *testing.T) {
	listed := listedTools(t)
	run := programsRun(t)
	for _, want := range []string{"go", "redis-server", "sh"} {
		if _, ok := run[want]; !ok {
			t.Errorf("the scan no longer sees %q run anywhere: is the pattern still right?", want)
		}
	}
	for name, file := range run {
		if !slices.Contains(listed, name) {
			t.Errorf("%s runs %q, which .ci/tools does not list: add it with its Debian package", file, name)
		}
	}
}

// TestTheRaceDetectorsCompilerIsListed: make test runs go test -race, which
// needs cgo and so a C compiler on the machine.
func TestTheRaceDetectorsCompilerIsListed(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(mk, []byte("-race")) {
		t.Skip("the Makefile no longer uses -race")
	}
	for _, tool := range []string{"gcc", "make", "git"} {
		if !slices.Contains(listedTools(t), tool) {
			t.Errorf(".ci/tools does not list %s, which make test needs", tool)
		}
	}
}
