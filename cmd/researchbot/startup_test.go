//go:build unix

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"debug/buildinfo"
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

// Bounds of what package initialisation allocates before main runs, which
// every command pays, `--help` included. Allocations vary far less from run
// to run than time (a few per cent), so they are what a test can bound
// without flaking; they
// follow the time closely (the init trace of issue 25: bleve's Levenshtein
// tables are 25,800 allocations and 10–30 ms).
// go-dateparser's locale tables alone once allocated 78 MB here (see
// internal/dateparserstub).
const (
	// maxInitBytes and maxInitAllocs bound all packages; the test binary
	// measured 4.8 MB and 40,500 allocations (bleve's scorch 25,800 of
	// them), and under -race, as `make test` runs it, 6.3 MB and 44,700
	// (the race detector's own, and scorch varying by a few thousand from
	// run to run), since go-domdistiller and whatlanggo were replaced by
	// stand-ins (7.0 MB and 42,000 before). The bounds leave room for that
	// spread, and fail if
	// go-dateparser's 78 MB came back, or a second JSON Schema validator
	// (santhosh-tekuri/jsonschema/v6 compiled five drafts' meta-schemas at
	// init: 21,300 allocations).
	maxInitBytes  = 12 << 20
	maxInitAllocs = 60_000
	// maxOwnInitAllocs bounds researchbot's own packages: no regular
	// expression, template or table is built at package level; each is
	// built where first used (sync.OnceValue). The command's measured 250;
	// the test binary's 720, and 970 merged with main of 23:20 UTC, most of
	// it package-level values of this package's test files and of
	// internal/researchtest. One regular expression costs 50–900.
	maxOwnInitAllocs = 1_600
)

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
	var total, allocs, ownAllocs int64
	var own []packageInit
	for _, in := range inits {
		total += in.bytes
		allocs += in.allocs
		if strings.HasPrefix(in.pkg, "github.com/researchbot/researchbot/") || in.pkg == "main" {
			ownAllocs += in.allocs
			own = append(own, in)
		}
	}
	slices.SortFunc(inits, func(a, b packageInit) int { return cmp.Compare(b.allocs, a.allocs) })
	slices.SortFunc(own, func(a, b packageInit) int { return cmp.Compare(b.allocs, a.allocs) })
	top := inits[:min(5, len(inits))]
	t.Logf("%d packages allocate %.1f MB in %d allocations in init (researchbot's own: %d); the most: %v",
		len(inits), float64(total)/1e6, allocs, ownAllocs, top)
	if total > maxInitBytes {
		t.Errorf("package initialisation allocates %.1f MB, more than %d MB; the most: %v",
			float64(total)/1e6, maxInitBytes>>20, top)
	}
	if allocs > maxInitAllocs {
		t.Errorf("package initialisation makes %d allocations, more than %d; the most: %v", allocs, maxInitAllocs, top)
	}
	if ownAllocs > maxOwnInitAllocs {
		t.Errorf("researchbot's packages make %d allocations in init, more than %d (build tables and regular expressions where first used); the most: %v",
			ownAllocs, maxOwnInitAllocs, own[:min(5, len(own))])
	}
}

// packageInit is one line of GODEBUG=inittrace=1 output:
// "init net/http @1.2 ms, 0.3 ms clock, 12345 bytes, 67 allocs".
type packageInit struct {
	pkg     string
	clockMs float64
	bytes   int64
	allocs  int64
}

func (p packageInit) String() string {
	return fmt.Sprintf("%s %.2f MB %d allocs", p.pkg, float64(p.bytes)/1e6, p.allocs)
}

func parseInitTrace(out []byte) ([]packageInit, error) {
	var inits []packageInit
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		n, err2 := strconv.ParseInt(f[7], 10, 64)
		allocs, err3 := strconv.ParseInt(f[9], 10, 64)
		if err := cmp.Or(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("init trace line %q: %w", sc.Text(), err)
		}
		inits = append(inits, packageInit{pkg: f[1], clockMs: clock, bytes: n, allocs: allocs})
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
	if want := []packageInit{{"net/http", 0.3, 12345, 67}, {"runtime", 0.05, 0, 0}}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseInitTrace([]byte("no trace")); err == nil {
		t.Error("output without a trace was accepted")
	}
}

// startupCommands are the subcommands that do no work: each must start
// within 2× the minimal Go program (issue 25).
var startupCommands = [][]string{{"--help"}, {"version"}, {"completion", "bash"}}

// startupRuns is how many times BenchmarkStartup starts each program.
const startupRuns = 21

// BenchmarkStartup builds the command and a minimal Go program that uses
// net/http and encoding/json (testdata/minimal) the way the release is built,
// then starts them in turn, 21 times each: the minimal program and every
// command of startupCommands, in an order that rotates at every round, so
// that both meet the same load. It prints, for each command, the median of
// the ratios of its time to the minimal program's time of the same round,
// with their spread: a ratio holds on a busy machine where a time does not.
// It also prints the binaries' sizes, the command's peak resident memory and
// the ten package initialisations that cost most (GODEBUG=inittrace=1,
// median clock time over the runs).
func BenchmarkStartup(b *testing.B) {
	bin := buildCommand(b)
	minimal := buildProgram(b, "./testdata/minimal", "minimal")
	for _, p := range []string{bin, minimal} {
		if fi, err := os.Stat(p); err == nil {
			b.Logf("%s: %.1f MB", filepath.Base(p), float64(fi.Size())/1e6)
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		programs := [][]string{{minimal}}
		for _, args := range startupCommands {
			programs = append(programs, append([]string{bin}, args...))
		}
		for _, p := range programs { // warm the page cache
			startOnce(b, p, nil)
		}
		b.StartTimer()
		walls := make([][]time.Duration, len(programs))
		var peaks []int64
		var traces [][]packageInit
		for round := range startupRuns {
			for k := range programs {
				i := (round + k) % len(programs)
				wall, ps := startOnce(b, programs[i], nil)
				walls[i] = append(walls[i], wall)
				if i == 1 {
					peaks = append(peaks, peakRSS(ps))
				}
			}
			// The init trace is taken apart from the timed runs: writing
			// it costs time of its own.
			_, _, trace := startTraced(b, programs[1])
			traces = append(traces, trace)
		}
		load := loadAverage()
		for i, args := range startupCommands {
			ratios := make([]float64, startupRuns)
			for r := range ratios {
				ratios[r] = float64(walls[i+1][r]) / float64(walls[0][r])
			}
			name := "startup/minimal"
			if i > 0 {
				name = args[0] + "/minimal"
			}
			b.ReportMetric(quantile(ratios, 0.5), name)
			b.Logf("researchbot %s: %s, minimal program %s; ratio median %.2f, quartiles %.2f–%.2f, range %.2f–%.2f over %d interleaved runs; load %s",
				strings.Join(args, " "), spread(walls[i+1]), spread(walls[0]),
				quantile(ratios, 0.5), quantile(ratios, 0.25), quantile(ratios, 0.75),
				quantile(ratios, 0), quantile(ratios, 1), startupRuns, load)
		}
		reportInitFloor(b, walls[1], walls[0], traces)
		b.ReportMetric(float64(quantile(walls[1], 0.5))/float64(time.Millisecond), "ms/start")
		b.ReportMetric(float64(quantile(walls[0], 0.5))/float64(time.Millisecond), "ms/minimal")
		b.ReportMetric(float64(quantile(peaks, 0.5))/(1<<20), "MiB-peak-RSS")
		// Printed, not logged: the testing package keeps ten lines of a
		// benchmark's log.
		inits := medianInits(traces)
		fmt.Printf("package initialisation of researchbot --help, the ten that cost most (median over %d runs):\n%s\n",
			len(traces), formatInits(inits, 10, "packages"))
		fmt.Printf("the same by module, the ten that cost most:\n%s\n", formatInits(initsByModule(b, bin, inits), 10, "modules"))
	}
}

// reportInitFloor reports what `researchbot --help` would take if no
// package initialised anything: in each round, its time (help) less the sum
// of the init trace taken in the same round, over the minimal program's
// time of that round (minimal). Package initialisation is the one part of
// a start that lazier dependencies could remove, so this ratio is the
// lowest that any of them could reach with this binary: the rest is the
// runtime's start, the page faults of a larger binary and the command's
// own work.
//
// The init trace is another start than the timed one, so a round's
// difference carries the spread of two starts (one may even come out
// negative): the median and quartiles are the figures to read.
func reportInitFloor(b *testing.B, help, minimal []time.Duration, traces [][]packageInit) {
	inits := make([]time.Duration, len(traces))
	floors := make([]time.Duration, len(traces))
	ratios := make([]float64, len(traces))
	for r, trace := range traces {
		var initMs float64
		for _, in := range trace {
			initMs += in.clockMs
		}
		inits[r] = time.Duration(initMs * float64(time.Millisecond))
		floors[r] = help[r] - inits[r]
		ratios[r] = float64(floors[r]) / float64(minimal[r])
	}
	b.ReportMetric(quantile(ratios, 0.5), "without-init/minimal")
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.Logf("researchbot --help less its package initialisation (%.1f ms summed, quartiles %.1f–%.1f): %.1f ms, quartiles %.1f–%.1f; ratio to the minimal program median %.2f, quartiles %.2f–%.2f over %d rounds",
		ms(quantile(inits, 0.5)), ms(quantile(inits, 0.25)), ms(quantile(inits, 0.75)),
		ms(quantile(floors, 0.5)), ms(quantile(floors, 0.25)), ms(quantile(floors, 0.75)),
		quantile(ratios, 0.5), quantile(ratios, 0.25), quantile(ratios, 0.75), len(ratios))
}

// startOnce runs the program argv (stdout discarded) with env added to the
// environment and returns its wall time and exit state.
func startOnce(b *testing.B, argv, env []string) (time.Duration, *os.ProcessState) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	return wall, cmd.ProcessState
}

// startTraced runs argv with GODEBUG=inittrace=1 and returns its init trace.
func startTraced(b *testing.B, argv []string) (time.Duration, *os.ProcessState, []packageInit) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	wall := time.Since(start)
	inits, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	return wall, cmd.ProcessState, inits
}

// medianInits is, per package, the median clock time over traces and the
// allocations of the first (they vary by a few per cent at most), most
// costly first.
func medianInits(traces [][]packageInit) []packageInit {
	clocks := map[string][]float64{}
	var out []packageInit
	for t, trace := range traces {
		for _, in := range trace {
			clocks[in.pkg] = append(clocks[in.pkg], in.clockMs)
			if t == 0 {
				out = append(out, in)
			}
		}
	}
	for i := range out {
		out[i].clockMs = quantile(clocks[out[i].pkg], 0.5)
	}
	slices.SortStableFunc(out, func(a, b packageInit) int { return cmp.Compare(b.clockMs, a.clockMs) })
	return out
}

// initsByModule sums inits by the module of bin that holds each package
// (sumByModule): what one upstream change could make lazy.
func initsByModule(b *testing.B, bin string, inits []packageInit) []packageInit {
	b.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		b.Fatal(err)
	}
	modules := []string{info.Main.Path}
	for _, d := range info.Deps {
		modules = append(modules, d.Path)
	}
	return sumByModule(inits, modules, info.Main.Path)
}

// sumByModule sums inits by the longest of modules that holds each package
// ("main" is mainModule's; the rest are the standard library's, "std"),
// most costly first.
func sumByModule(inits []packageInit, modules []string, mainModule string) []packageInit {
	index := map[string]int{}
	var sums []packageInit
	for _, in := range inits {
		module := "std"
		if in.pkg == "main" {
			module = mainModule
		}
		for _, m := range modules {
			if (in.pkg == m || strings.HasPrefix(in.pkg, m+"/")) && (module == "std" || len(m) > len(module)) {
				module = m
			}
		}
		i, ok := index[module]
		if !ok {
			i = len(sums)
			index[module] = i
			sums = append(sums, packageInit{pkg: module})
		}
		sums[i].clockMs += in.clockMs
		sums[i].bytes += in.bytes
		sums[i].allocs += in.allocs
	}
	slices.SortStableFunc(sums, func(a, b packageInit) int { return cmp.Compare(b.clockMs, a.clockMs) })
	return sums
}

func TestSumByModule(t *testing.T) {
	inits := []packageInit{
		{"net/http", 0.5, 10, 1},
		{"github.com/blevesearch/bleve/v2/index/scorch", 7, 100, 20},
		{"github.com/blevesearch/bleve/v2", 1, 5, 2},
		{"github.com/blevesearch/bleve_index_api", 0.25, 1, 1},
		{"main", 0.1, 1, 1},
		{"encoding/json", 0.5, 10, 1},
	}
	modules := []string{"example.com/bot", "github.com/blevesearch/bleve/v2", "github.com/blevesearch/bleve_index_api"}
	got := sumByModule(inits, modules, "example.com/bot")
	want := []packageInit{
		{"github.com/blevesearch/bleve/v2", 8, 105, 22},
		{"std", 1, 20, 2},
		{"github.com/blevesearch/bleve_index_api", 0.25, 1, 1},
		{"example.com/bot", 0.1, 1, 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// formatInits lists the first n of inits, one a line, and their sum over
// all, which are of the kind noun names ("packages", "modules").
func formatInits(inits []packageInit, n int, noun string) string {
	var b strings.Builder
	var clock float64
	var bytes, allocs int64
	for i, in := range inits {
		clock += in.clockMs
		bytes += in.bytes
		allocs += in.allocs
		if i < n {
			fmt.Fprintf(&b, "  %6.2f ms %9d bytes %6d allocs  %s\n", in.clockMs, in.bytes, in.allocs, in.pkg)
		}
	}
	fmt.Fprintf(&b, "  %6.2f ms %9d bytes %6d allocs  sum of %d %s", clock, bytes, allocs, len(inits), noun)
	return b.String()
}

// spread is "median (min–max)" of ds in milliseconds.
func spread(ds []time.Duration) string {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return fmt.Sprintf("%.1f ms (%.1f–%.1f)", ms(quantile(ds, 0.5)), ms(quantile(ds, 0)), ms(quantile(ds, 1)))
}

// loadAverage is the machine's 1-, 5- and 15-minute load averages as
// /proc/loadavg has them, or "unknown".
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// buildCommand builds researchbot into a temporary directory the way the
// release is built and returns its path.
func buildCommand(b *testing.B) string { return buildProgram(b, ".", "researchbot") }

// buildProgram builds the main package pkg as the release is built
// (CGO_ENABLED=0, -trimpath, stripped: see the Dockerfile) into a temporary
// directory and returns the binary's path; it skips the benchmark without
// the go command.
func buildProgram(b *testing.B, pkg, name string) string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		b.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command(goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
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

// quantile is the q-quantile (0 ≤ q ≤ 1) of xs, the nearest rank.
func quantile[T cmp.Ordered](xs []T, q float64) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
