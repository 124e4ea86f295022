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

// BenchmarkTerminalRun builds the command and runs `researchbot run --mode
// auto` as its own process against the fakes of `make bench` (LLM 200 ms,
// search 100 ms, page and robots.txt 50 ms) and a real redis-server, and
// reports, whole process included: process start → first LLM request,
// wall time over the run's critical path (researchtest.CriticalPath),
// peak RSS and CPU time of the process, and the Redis commands the whole
// process sent (redis-cmds, INFO commandstats: a Lua script's commands
// count as well as the script), logged by name.
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
	store := redisstore.NewStore(conn.Client, "rb:")
	b.ResetTimer()
	for range b.N {
		mu.Lock()
		firstCall = time.Time{}
		mu.Unlock()
		cmd := exec.Command(bin, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
		cmd.Env = append(os.Environ(), "RESEARCHBOT_NO_EDITOR=1", "REDIS_URL="+srv.URL,
			"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+model.URL(), "SEARXNG_URL="+web.URL(),
			"FETCH_ALLOW_PRIVATE_NETWORKS=true", "FETCH_CACHE_TTL=1ms")
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
		b.ReportMetric(float64(first)/float64(time.Millisecond), "ms-to-first-llm-request")
		b.ReportMetric(float64(wall)/float64(researchtest.CriticalPath(r, lat)), "wall/critical-path")
		b.ReportMetric(float64(peakRSS(ps))/(1<<20), "MiB-peak-RSS")
		b.ReportMetric(float64(ps.UserTime()+ps.SystemTime())/float64(time.Millisecond), "cpu-ms")
		b.ReportMetric(cmds, "redis-cmds")
		b.Logf("redis commands of the terminal run by name (sum %.0f):%s", cmds, byName)
	}
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
