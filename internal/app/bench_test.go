package app

import (
	"context"
	"runtime"
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
const (
	benchLLM    = 200 * time.Millisecond
	benchSearch = 100 * time.Millisecond
	benchFetch  = 50 * time.Millisecond
	// criticalPath is the sum of latencies along an auto run's longest chain
	// of dependent calls: plan → search → rank → fetch → analyze → write → review.
	criticalPath = 5*benchLLM + benchSearch + benchFetch
)

func redisCommands(b *testing.B, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "stats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no total_commands_processed in INFO")
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConcurrentAutoRuns runs 1 and 20 auto-mode runs at once against
// the fakes with fixed latencies and reports how close a run gets to its
// critical path.
func BenchmarkConcurrentAutoRuns(b *testing.B) {
	for _, n := range []int{1, 20} {
		b.Run("runs="+strconv.Itoa(n), func(b *testing.B) { benchAutoRuns(b, n) })
	}
}

func benchAutoRuns(b *testing.B, n int) {
	res := &researchtest.Researcher{Delay: benchLLM, TextTokens: true}
	h := newHarness(b, res, map[string]string{"WORKER_CONCURRENCY": strconv.Itoa(n)})
	h.web.SearchDelay, h.web.FetchDelay = benchSearch, benchFetch
	var wallSum time.Duration
	var runs, calls, promptTokens, completionTokens int
	b.ResetTimer()
	for range b.N {
		cmd0, cpu0 := redisCommands(b, h.app.Conn.Client), cpuTime()
		for range n {
			h.start(checkpoints.ModeAuto, pipeline.Limits{})
		}
		for range n {
			r := <-h.rec.done
			if r.Status != pipeline.StatusCompleted {
				b.Fatalf("run %s: %s %s", r.ID, r.Status, r.Failure)
			}
			wallSum += r.FinishedAt.Sub(r.CreatedAt)
			runs++
			calls += r.Spend.LLMCalls
			promptTokens += r.Spend.PromptTokens
			completionTokens += r.Spend.CompletionTokens
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(n), "cpu-ms/run")
		b.ReportMetric(float64(redisCommands(b, h.app.Conn.Client)-cmd0)/float64(n), "redis-cmds/run")
	}
	avg := wallSum / time.Duration(runs)
	b.ReportMetric(float64(avg)/float64(time.Millisecond), "wall-ms/run")
	b.ReportMetric(float64(avg)/float64(criticalPath), "wall/critical-path")
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
