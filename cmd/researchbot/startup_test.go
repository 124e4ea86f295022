//go:build unix

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maxInitBytes bounds what the packages linked into the command allocate
// before main runs. Every command pays it, `--help` included; go-dateparser's
// locale tables alone once allocated 78 MB here (see internal/dateparserstub).
const maxInitBytes = 16 << 20

// TestPackageInitIsLight runs this test binary as `researchbot --help` with
// the runtime's init trace on and sums what package initialisation
// allocates. (The test binary links the command's packages and a few test
// helpers, so it bounds the command from above.)
func TestPackageInitIsLight(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RESEARCHBOT_CHILD=1", `RESEARCHBOT_ARGS=["--help"]`, "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("researchbot --help: %v\n%s", err, stderr.String())
	}
	inits, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, in := range inits {
		total += in.bytes
	}
	slices.SortFunc(inits, func(a, b packageInit) int { return cmp.Compare(b.bytes, a.bytes) })
	top := inits[:min(5, len(inits))]
	t.Logf("%d packages allocate %.1f MB in init; the most: %v", len(inits), float64(total)/1e6, top)
	if total > maxInitBytes {
		t.Errorf("package initialisation allocates %.1f MB, more than %d MB; the most: %v",
			float64(total)/1e6, maxInitBytes>>20, top)
	}
}

// packageInit is one line of GODEBUG=inittrace=1 output:
// "init net/http @1.2 ms, 0.3 ms clock, 12345 bytes, 67 allocs".
type packageInit struct {
	pkg   string
	bytes int64
}

func (p packageInit) String() string { return fmt.Sprintf("%s %.1f MB", p.pkg, float64(p.bytes)/1e6) }

func parseInitTrace(out []byte) ([]packageInit, error) {
	var inits []packageInit
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.ParseInt(f[7], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("init trace line %q: %w", sc.Text(), err)
		}
		inits = append(inits, packageInit{pkg: f[1], bytes: n})
	}
	if len(inits) == 0 {
		return nil, fmt.Errorf("no init trace in:\n%s", out)
	}
	return inits, sc.Err()
}

func TestParseInitTrace(t *testing.T) {
	got, err := parseInitTrace([]byte("usage text\ninit net/http @1.2 ms, 0.3 ms clock, 12345 bytes, 67 allocs\n" +
		"init runtime @0.01 ms, 0.05 ms clock, 0 bytes, 0 allocs\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []packageInit{{"net/http", 12345}, {"runtime", 0}}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseInitTrace([]byte("no trace")); err == nil {
		t.Error("output without a trace was accepted")
	}
}

// BenchmarkStartup builds the command and prints the median wall time and
// the median peak resident memory of `researchbot --help` over 21 runs.
func BenchmarkStartup(b *testing.B) {
	bin := buildCommand(b)
	const runs = 21
	b.ResetTimer()
	for range b.N {
		walls := make([]time.Duration, 0, runs)
		peaks := make([]int64, 0, runs)
		for range runs {
			cmd := exec.Command(bin, "--help")
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("researchbot --help: %v", err)
			}
			walls = append(walls, time.Since(start))
			peaks = append(peaks, peakRSS(cmd.ProcessState))
		}
		b.ReportMetric(float64(median(walls))/float64(time.Millisecond), "ms/start")
		b.ReportMetric(float64(median(peaks))/(1<<20), "MiB-peak-RSS")
	}
}

// buildCommand builds researchbot into a temporary directory (skipping the
// benchmark without the go command) and returns its path.
func buildCommand(b *testing.B) string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		b.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(b.TempDir(), "researchbot")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// peakRSS is the peak resident set size of an exited process, in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes
	}
	return int64(ru.Maxrss) << 10 // KiB
}

func median[T cmp.Ordered](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
