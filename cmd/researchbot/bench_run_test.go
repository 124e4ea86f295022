//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/redisstore"
)

// terminalRuns is how many runs BenchmarkTerminalRun makes per iteration,
// and terminalPhaseCycle the cycle their start times are spread over.
const (
	terminalRuns       = 7
	terminalPhaseCycle = 250 * time.Millisecond
)

// terminalSample is what one terminal run measured.
type terminalSample struct {
	firstLLM, wall, critical time.Duration
	peakRSS                  int64
	cpu                      time.Duration
	cmds                     float64
	byName                   string
}

// BenchmarkTerminalRun builds the command and runs `researchbot run --mode
// auto` as its own process against the fakes of `make bench` (LLM 200 ms,
// search 100 ms, page and robots.txt 50 ms) and a real redis-server,
// terminalRuns times per iteration, each started at another phase of a
// 250 ms cycle (the period at which the terminal once polled for its run's
// end; a figure that hangs on a timer's phase shows as spread). It reports
// the medians, whole process included: process start → first LLM request,
// wall time over the run's critical path (researchtest.CriticalPath), peak
// RSS and CPU time of the process, and the Redis commands the whole process
// sent (redis-cmds, INFO commandstats: a Lua script's commands count as
// well as the script); it logs each figure's spread with the machine's
// load, and the commands of the median run by name.
func BenchmarkTerminalRun(b *testing.B) {
	bin := buildCommand(b)
	lat := researchtest.Latencies{LLM: 200 * time.Millisecond, Search: 100 * time.Millisecond, Fetch: 50 * time.Millisecond}
	srv, _ := redistest.Start(b)
	var mu sync.Mutex
	var firstCall time.Time
	res := &researchtest.Researcher{Delay: lat.LLM, TextTokens: true, Before: func(string, int) *llmtest.Reply {
		mu.Lock()
		if firstCall.IsZero() {
			firstCall = time.Now()
		}
		mu.Unlock()
		return nil
	}}
	model := llmtest.NewServer(b, res.Respond)
	web := researchtest.NewWeb(b, researchtest.DefaultPages()...)
	web.SearchDelay, web.FetchDelay = lat.Search, lat.Fetch
	conn, err := redisstore.Connect(context.Background(), srv.URL, redisstore.ConnOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	store := redisstore.NewStoreWithOptions(conn.Client, redisstore.StoreOptions{})
	env := append(os.Environ(), "RESEARCHBOT_NO_EDITOR=1", "REDIS_URL="+srv.URL,
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+model.URL(), "SEARXNG_URL="+web.URL(),
		"FETCH_ALLOW_PRIVATE_NETWORKS=true", "FETCH_CACHE_TTL=1ms")
	runOnce := func() terminalSample {
		mu.Lock()
		firstCall = time.Time{}
		mu.Unlock()
		cmd := exec.Command(bin, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
		calls0 := commandCalls(b, conn.Client)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("researchbot run: %v\n%s", err, stderr.String())
		}
		wall := time.Since(start)
		cmds, byName := commandsSince(b, conn.Client, calls0)
		var m [][]byte
		for _, line := range bytes.Split(stderr.Bytes(), []byte("\n")) {
			if m = startedRe.FindSubmatch(line); m != nil {
				break
			}
		}
		if m == nil {
			b.Fatalf("no run id in:\n%s", stderr.String())
		}
		r, err := store.Load(context.Background(), string(m[1]))
		if err != nil {
			b.Fatal(err)
		}
		mu.Lock()
		first := firstCall.Sub(start)
		mu.Unlock()
		ps := cmd.ProcessState
		return terminalSample{firstLLM: first, wall: wall, critical: researchtest.CriticalPath(r, lat),
			peakRSS: peakRSS(ps), cpu: ps.UserTime() + ps.SystemTime(), cmds: cmds, byName: byName}
	}
	b.ResetTimer()
	for range b.N {
		samples := make([]terminalSample, terminalRuns)
		for i := range samples {
			// Start at the i-th seventh of the cycle: the benchmark's own
			// pacing, not a wait for anything.
			cycleStart := time.Now().Truncate(terminalPhaseCycle).Add(terminalPhaseCycle)
			time.Sleep(time.Until(cycleStart.Add(time.Duration(i) * terminalPhaseCycle / terminalRuns)))
			samples[i] = runOnce()
		}
		reportTerminalRuns(b, samples, loadAverage())
	}
}

// reportTerminalRuns reports the medians of samples and logs their spreads.
func reportTerminalRuns(b *testing.B, samples []terminalSample, load string) {
	pick := func(f func(terminalSample) float64) []float64 {
		out := make([]float64, len(samples))
		for i, s := range samples {
			out[i] = f(s)
		}
		return out
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	ratio := pick(func(s terminalSample) float64 { return float64(s.wall) / float64(s.critical) })
	first := pick(func(s terminalSample) float64 { return ms(s.firstLLM) })
	rss := pick(func(s terminalSample) float64 { return float64(s.peakRSS) / (1 << 20) })
	cpu := pick(func(s terminalSample) float64 { return ms(s.cpu) })
	cmds := pick(func(s terminalSample) float64 { return s.cmds })
	b.ReportMetric(quantile(first, 0.5), "ms-to-first-llm-request")
	b.ReportMetric(quantile(ratio, 0.5), "wall/critical-path")
	b.ReportMetric(quantile(rss, 0.5), "MiB-peak-RSS")
	b.ReportMetric(quantile(cpu, 0.5), "cpu-ms")
	b.ReportMetric(quantile(cmds, 0.5), "redis-cmds")
	span := func(xs []float64, format string) string {
		return fmt.Sprintf(format+" ("+format+"–"+format+")", quantile(xs, 0.5), quantile(xs, 0), quantile(xs, 1))
	}
	b.Logf("%d terminal runs, median (range), load %s: wall/critical-path %s, to first LLM request %s ms, CPU %s ms, peak RSS %s MiB, Redis commands %s",
		len(samples), load, span(ratio, "%.3f"), span(first, "%.0f"), span(cpu, "%.0f"), span(rss, "%.1f"), span(cmds, "%.0f"))
	median := samples[0]
	for _, s := range samples {
		if s.cmds == quantile(cmds, 0.5) {
			median = s
			break
		}
	}
	b.Logf("redis commands of a median terminal run by name (sum %.0f):%s", median.cmds, median.byName)
}

// commandCalls is how many times the server ran each command (INFO
// commandstats), by name.
func commandCalls(b *testing.B, rdb *redis.Client) map[string]float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		if f, err := strconv.ParseFloat(calls, 64); err == nil {
			out[strings.TrimPrefix(name, "cmdstat_")] = f
		}
	}
	return out
}

// commandsSince is the commands run since the sample before (INFO left
// out: the benchmark's own), in total and by name, most first.
func commandsSince(b *testing.B, rdb *redis.Client, before map[string]float64) (float64, string) {
	after := commandCalls(b, rdb)
	names := []string{}
	total := 0.0
	for k, v := range after {
		if d := v - before[k]; d > 0 && k != "info" {
			names = append(names, k)
			total += d
		}
	}
	sort.Slice(names, func(i, j int) bool {
		di, dj := after[names[i]]-before[names[i]], after[names[j]]-before[names[j]]
		if di != dj {
			return di > dj
		}
		return names[i] < names[j]
	})
	var sb strings.Builder
	for _, k := range names {
		fmt.Fprintf(&sb, " %s=%.0f", k, after[k]-before[k])
	}
	return total, sb.String()
}
