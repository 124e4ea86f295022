package app

import (
	"context"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// Fixed latencies of the fakes in the benchmarks.
var benchLatency = researchtest.Latencies{LLM: 200 * time.Millisecond, Search: 100 * time.Millisecond, Fetch: 50 * time.Millisecond}

// redisInfo returns the numeric fields of an INFO section.
func redisInfo(b *testing.B, rdb *redis.Client, section string) map[string]float64 {
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if f, err := strconv.ParseFloat(v, 64); ok && err == nil {
			out[k] = f
		}
	}
	return out
}

// redisCPU is the CPU time the server has used.
func redisCPU(b *testing.B, rdb *redis.Client) time.Duration {
	c := redisInfo(b, rdb, "cpu")
	return time.Duration((c["used_cpu_sys"] + c["used_cpu_user"]) * float64(time.Second))
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

// commandsPerRun is the commands per run by name between two commandCalls
// samples, less what the idle workers' claim passes send by name in the same
// time (idle: calls per second by name, measured before the batch).
// Commands a Lua script runs count under their own names as well as under
// evalsha (and in total_commands_processed alike).
// The benchmark's own INFO and ZCARD (waitIdle) commands are left out.
func commandsPerRun(before, after, idle map[string]float64, seconds float64, n int) map[string]float64 {
	out := map[string]float64{}
	for k := range after {
		if d := after[k] - before[k] - idle[k]*seconds; d > 0 && k != "info" && k != "zcard" {
			out[k] = d / float64(n)
		}
	}
	return out
}

// logCommandStats logs commands per run by name, most first, and their sum:
// where a run's Redis traffic goes. One line (a benchmark's log is cut
// after ten lines without -v).
func logCommandStats(b *testing.B, perRun map[string]float64, n int) {
	names := make([]string, 0, len(perRun))
	sum := 0.0
	for k, v := range perRun {
		names = append(names, k)
		sum += v
	}
	sort.Slice(names, func(i, j int) bool {
		if perRun[names[i]] != perRun[names[j]] {
			return perRun[names[i]] > perRun[names[j]]
		}
		return names[i] < names[j]
	})
	var sb strings.Builder
	for _, k := range names {
		if perRun[k] < 0.05 {
			continue
		}
		sb.WriteString(" " + k + "=" + strconv.FormatFloat(perRun[k], 'f', 1, 64))
	}
	b.Logf("runs=%d redis commands per run by name (sum %.1f):%s", n, sum, sb.String())
}

// waitIdle waits until no run is in the active index: each finished run's
// last save (the record that it was shown) is done.
func waitIdle(b *testing.B, rdb *redis.Client) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n, err := rdb.ZCard(context.Background(), "rb:runs:active").Result()
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d runs still active 10 s after the batch", n)
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConcurrentAutoRuns starts 1, 20 and 100 auto-mode runs at once
// through the real engine, a real redis-server and the real LLM, search and
// fetch clients, against fakes with fixed latencies (LLM 200 ms, search
// 100 ms, page and robots.txt 50 ms; pages are not cached, so every run
// reads its pages and robots.txt), and reports:
//
//   - latency/critical-path: the mean over runs of the run's latency
//     (created → finished, by the engine's clock) over its critical path
//     (researchtest.CriticalPath, from the calls it made);
//   - makespan/critical-path: the batch, from the first start to the last
//     run's end, over the longest critical path;
//   - cpu-ms/run: this process (engine, clients and the fakes) plus the
//     redis-server (INFO cpu), per run;
//   - redis-cmds/run: commands the server processed for the batch (INFO
//     commandstats, by name: a Lua script's commands count as well as the
//     script), less what the idle workers' claim passes send in that time
//     (measured by name before) and the benchmark's own INFOs;
//   - runs/s: runs finished per second of the batch, one Redis serving.
//
// It logs the Redis commands per run by name, on one line, most first: the
// terms of redis-cmds/run.
func BenchmarkConcurrentAutoRuns(b *testing.B) {
	for _, n := range []int{1, 20, 100} {
		b.Run("runs="+strconv.Itoa(n), func(b *testing.B) { benchAutoRuns(b, n) })
	}
}

// idleWindow is how long the idle workers' Redis traffic is sampled: their
// claim passes run every half lease (and asynq's pollers, before, every
// 200 and 250 ms), so a short sample could be a tick off; three seconds
// keep that small.
const idleWindow = 3 * time.Second

func benchAutoRuns(b *testing.B, n int) {
	res := &researchtest.Researcher{Delay: benchLatency.LLM, TextTokens: true}
	h := newHarness(b, res, map[string]string{"WORKER_CONCURRENCY": strconv.Itoa(n), "FETCH_CACHE_TTL": "1ms"})
	h.web.SearchDelay, h.web.FetchDelay = benchLatency.Search, benchLatency.Fetch
	rdb := h.app.Conn.Client
	var ratioSum float64
	var runs, calls, promptTokens, completionTokens int
	b.ResetTimer()
	for range b.N {
		// The idle workers look for work (claim passes): that traffic is
		// not the runs'.
		idleStats0 := commandCalls(b, rdb)
		time.Sleep(idleWindow) // a measurement window, not a synchronisation
		idleStats1 := commandCalls(b, rdb)
		idleByName := map[string]float64{}
		for k, v := range idleStats1 {
			idleByName[k] = (v - idleStats0[k]) / idleWindow.Seconds()
		}

		cpu0, rcpu0 := cpuTime(), redisCPU(b, rdb)
		stats0 := commandCalls(b, rdb)
		start := time.Now()
		for range n {
			h.start(checkpoints.ModeAuto, pipeline.Limits{})
		}
		var longest time.Duration
		for range n {
			r := <-h.rec.done
			if r.Status != pipeline.StatusCompleted {
				b.Fatalf("run %s: %s %s", r.ID, r.Status, r.Failure)
			}
			cp := researchtest.CriticalPath(r, benchLatency)
			longest = max(longest, cp)
			ratioSum += float64(r.FinishedAt.Sub(r.CreatedAt)) / float64(cp)
			runs++
			calls += r.Spend.LLMCalls
			promptTokens += r.Spend.PromptTokens
			completionTokens += r.Spend.CompletionTokens
		}
		makespan := time.Since(start)
		cpu := cpuTime() - cpu0 + redisCPU(b, rdb) - rcpu0
		// A run is done for the batch once shown; the save recording that
		// follows. Count its commands too: wait until no run is active.
		waitIdle(b, rdb)
		perRun := commandsPerRun(stats0, commandCalls(b, rdb), idleByName, time.Since(start).Seconds(), n)
		cmds := 0.0
		for _, v := range perRun {
			cmds += v
		}
		logCommandStats(b, perRun, n)
		idle := 0.0
		for _, v := range idleByName {
			idle += v
		}
		b.ReportMetric(idle, "idle-redis-cmds/s")
		b.ReportMetric(float64(makespan)/float64(longest), "makespan/critical-path")
		b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(n), "cpu-ms/run")
		b.ReportMetric(cmds, "redis-cmds/run")
		b.ReportMetric(float64(n)/makespan.Seconds(), "runs/s")
		b.ReportMetric(float64(longest)/float64(time.Millisecond), "critical-path-ms")
	}
	b.ReportMetric(ratioSum/float64(runs), "latency/critical-path")
	// What a run costs in model use: calls, and tokens measured from the text
	// of the prompts and answers (four characters a token).
	b.ReportMetric(float64(calls)/float64(runs), "llm-calls/run")
	b.ReportMetric(float64(promptTokens)/float64(runs), "prompt-tokens/run")
	b.ReportMetric(float64(completionTokens)/float64(runs), "completion-tokens/run")
}

// BenchmarkMemoryPerWaitingRun parks 200 runs at their plan checkpoint and
// measures what they hold in this process: it should be nothing.
func BenchmarkMemoryPerWaitingRun(b *testing.B) {
	const n = 200
	for range b.N {
		h := newHarness(b, &researchtest.Researcher{}, map[string]string{"WORKER_CONCURRENCY": "16"})
		// Warm up with a whole batch, so one-time caches (compiled regexps,
		// encoding/json type data, connection pools) are not counted.
		for range n {
			h.start(checkpoints.ModeGuided, pipeline.Limits{})
		}
		for range n {
			<-h.rec.offers
		}
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		calls0 := len(h.llm.Calls())
		for range n {
			h.start(checkpoints.ModeGuided, pipeline.Limits{})
		}
		for range n {
			<-h.rec.offers
		}
		time.Sleep(200 * time.Millisecond) // let workers return
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		// The fake model keeps a log of every call it received, in this same
		// process; that is the test's memory, not the engine's.
		fakeLog := 0
		for _, c := range h.llm.Calls()[calls0:] {
			fakeLog += len(c.System) + len(c.User) + len(c.Schema) + len(c.Model) + len(c.SchemaName)
		}
		held := int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(fakeLog)
		b.ReportMetric(float64(held)/n, "heap-bytes/waiting-run")
		b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/waiting-run")
	}
}
