//go:build faults && soak

package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// soakServe (TestSoak/serve): 60 guided runs asked for with `/research`
// through the fake Slack and approved by clicking their checkpoints' buttons
// (a quarter of them clicked twice at once), served by two `researchbot
// serve` processes and two `researchbot worker` processes sharing one Redis,
// one of which is killed with SIGKILL every 1.5–2.5 s (up to 40 times) and started again, while a
// fifth process — the witness, a `serve` that is never killed — takes its
// share of the Socket Mode envelopes and of the runs throughout.
//
// The fake Slack deals envelopes across every open connection, as Slack
// does, and keeps every Web API call: from them the soak counts what the
// people in the channel saw. At the end every request became one run and
// every run is final; a run that did not complete failed for a reason the
// kills explain; each thread shows its outcome (report or failure) once and
// its report file once; no checkpoint was posted twice and none still
// offers buttons; every checkpoint holds one decision, by the person who
// clicked; no step of a run had two model calls in flight; and the
// witness's goroutines, open file descriptors and heap (its /metrics) are
// back where they were after a warm-up.
func soakServe(t *testing.T) {
	const runs, warmups = 60, 3
	bin := buildResearchbot(t)
	rp := startRedis(t)
	res := &researchtest.Researcher{DelayFor: func(string, int) time.Duration {
		return time.Duration(rand.IntN(400)) * time.Millisecond
	}}
	w := newWorld(t, "redis://"+rp.Addr()+"/0", res, nil)
	front := w.replica(w.redis, false) // reads the runs; takes no work
	fake := slackfake.New(t, slackfake.WithSpread())
	fake.AddChannel(channel, "research", true)
	fake.AddUser(user, "ada", "UTC")
	s := &serveSoak{t: t, bin: bin, w: w, fake: fake, logs: t.TempDir(), conns: map[int]*soakProcess{}}
	p := &clicker{fake: fake, seen: map[string]*clickState{}}
	stopClicking := p.start()
	defer stopClicking()

	witness := s.start("serve", "witness")
	for n := range warmups {
		s.ask(n, "warm")
	}
	s.waitAllFinal(front, "warm")
	g0, f0, h0 := witness.metrics(t)

	procs := []*soakProcess{s.start("serve", "serve-a"), s.start("serve", "serve-b"),
		s.start("worker", "worker-1"), s.start("worker", "worker-2")}
	// The requests arrive one every 700 ms, so that work is under way at every kill.
	asked := make(chan struct{})
	go func() { // owner: the test; ends once every request was made
		defer close(asked)
		for n := range runs {
			s.ask(n, "soak")
			time.Sleep(700 * time.Millisecond) // the arrival rate, not a synchronisation
		}
	}()
	const maxKills = 40
	kills, serveKills, midRun := 0, 0, 0
killing:
	for kills < maxKills {
		time.Sleep(1500*time.Millisecond + time.Duration(rand.IntN(1000))*time.Millisecond) // the fault's rhythm, not a synchronisation
		open := s.open(front, "soak")
		select {
		case <-asked:
			if open == 0 {
				break killing // every run has ended
			}
		default:
		}
		if open > 0 {
			midRun++
		}
		i := 2*(kills%2) + rand.IntN(2) // a serve, then a worker, then a serve…
		procs[i].kill()
		kills++
		if i < 2 {
			serveKills++
		}
		procs[i] = s.start(procs[i].role, procs[i].name)
	}
	<-asked
	soak := s.waitAllFinal(front, "soak")
	for _, x := range procs {
		x.kill()
	}
	stopClicking()

	// What the people in the channel saw, from the fake's record of calls.
	seen := readChannel(fake, soak)
	var statuses = map[pipeline.Status]int{}
	var unexplained, notPresented []string
	decided, undecided, byOther, askedTwice := 0, 0, 0, 0
	for _, r := range soak.runs {
		statuses[r.Status]++
		if r.Status != pipeline.StatusCompleted {
			if why := r.Failure + r.FallbackReason; !strings.Contains(why, "its worker stopped before it finished") {
				unexplained = append(unexplained, r.ID+": "+string(r.Status)+": "+why)
			}
		}
		if !r.Presented {
			notPresented = append(notPresented, r.ID)
		}
		perDef := map[string]int{}
		for _, inst := range r.Checkpoints {
			perDef[inst.DefinitionID]++
			switch {
			case inst.Decision == nil:
				undecided++
			case inst.Decision.By != user:
				byOther++
			default:
				decided++
			}
		}
		for _, n := range perDef {
			askedTwice += n - 1
		}
	}
	_, planPeak := w.model.worstPeak("research_plan|soak-")
	_, stepPeak := w.model.worstPeak("analysis|soak-")
	_, draftPeak := w.model.worstPeak("research_draft|soak-")
	clicks, doubles, refusedClicks := p.counts()

	// The witness, once the others are gone and its idle connections closed.
	settle := time.Now()
	var g1, f1, h1 int
	for {
		g1, f1, h1 = witness.metrics(t)
		if g1 <= g0+10 && f1 <= f0+10 || time.Since(settle) > 45*time.Second {
			break
		}
		time.Sleep(time.Second) // idle connections close on their own timers
	}

	set := w.settings()
	t.Logf("%d guided runs via /research on 2 serve + 2 worker processes and a witness serve, %d SIGKILLs (%d of serve, %d while runs were open): %v",
		runs, kills, serveKills, midRun, statuses)
	t.Logf("requests: %d made (%d tried again after the process that had them died before acking); %d lost after their ack to a kill of the serve that had them; "+
		"clicks: %d (%d double clicks), %d answered that nothing was changed; decisions in the store: %d, by someone else: %d, missing: %d",
		runs, s.retried, len(soak.lostAfterAck), clicks, doubles, refusedClicks, decided, byOther, undecided)
	t.Logf("Slack saw: %d chat.postMessage (%d outcomes, %d checkpoints, %d progress messages), %d chat.update, %d report files; the witness: %d → %d goroutines, %d → %d fds, %d → %d MB heap (counted %s after the end)",
		seen.posts, seen.outcomePosts, seen.checkpointPosts, seen.progressPosts, seen.updates, seen.reportFiles, g0, g1, f0, f1, h0, h1, time.Since(settle).Round(time.Second))
	if len(soak.lostAfterAck) > 0 {
		t.Logf("requests lost after their ack (the serve that acked them was killed before the run was created): %v", soak.lostAfterAck)
	}
	if midRun < kills/2 {
		t.Errorf("only %d of %d kills struck while runs were open", midRun, kills)
	}
	within(t, "requests lost after their ack, not explained by a kill of the serve that acked them", len(soak.unexplainedLost), none, set)
	within(t, "requests that became two runs", soak.twice, none, set)
	within(t, "runs failed for a reason the kills do not explain", len(unexplained), none, set)
	within(t, "runs whose outcome was never shown", len(notPresented)+seen.outcomeMissing, none, set)
	within(t, "threads that show their outcome twice", seen.outcomeTwice, none, set)
	within(t, "threads with their report file twice", seen.fileTwice, none, set)
	within(t, "completed runs without their report file", seen.fileMissing, none, set)
	within(t, "checkpoints posted twice (one checkpoint, one attempt, two messages)", seen.checkpointTwice, none, set)
	within(t, "checkpoints in the store never posted in their thread", seen.checkpointNever, none, set)
	within(t, "checkpoint messages still offering buttons after their run ended", seen.buttonsLeft, none, set)
	within(t, "progress messages posted twice in one thread", seen.progressTwice, none, set)
	within(t, "checkpoints without a decision, or decided by someone who did not click", undecided+byOther, none, set)
	within(t, "checkpoints asked twice (two instances of one definition in a run)", askedTwice, none, set)
	within(t, "plan calls in flight at once for one run", planPeak, oneCallInFlight, set)
	within(t, "analysis calls in flight at once for one run", stepPeak, oneCallInFlight, set)
	within(t, "draft calls in flight at once for one run", draftPeak, oneCallInFlight, set)
	within(t, "the witness's goroutines after the soak", g1, bound[int]{"as before + 10", func(settings) int { return g0 + 10 }}, set)
	within(t, "the witness's open file descriptors after the soak", f1, bound[int]{"as before + 10", func(settings) int { return f0 + 10 }}, set)
	within(t, "the witness's heap after the soak (MB)", h1, bound[int]{"as before + 16 MB", func(settings) int { return h0 + 16 }}, set)
	for _, e := range append(append(unexplained, soak.unexplainedLost...), seen.problems...) {
		t.Error(e)
	}
	if t.Failed() {
		s.dumpLogs()
	}
}

// serveSoak is the fleet of the serve soak: the processes it started, the
// requests it made and the Socket Mode connection of every serve.
type serveSoak struct {
	t    *testing.T
	bin  string
	w    *world
	fake *slackfake.Server
	logs string // a directory of every process's stderr

	mu      sync.Mutex
	gen     int
	conns   map[int]*soakProcess // connection number → the serve that opened it
	asked   []request
	retried int
}

// request is one `/research` a person typed.
type request struct {
	tag  string // "soak-7": in the question, so the run and its model calls are told apart
	acks []slackfake.Ack
	at   []time.Time // when each ack came
}

// soakProcess is one researchbot process of the serve soak.
type soakProcess struct {
	*workerProcess
	role, name string
	conn       int         // its Socket Mode connection (serve), numbered as the fake counts
	killedAt   time.Time   // when it was killed (zero while it lives)
	mu         *sync.Mutex // guards killedAt: the fleet's (serveSoak.mu)
}

// start starts `researchbot <role>` (serve or worker) with the world's
// settings and the fake Slack, and waits until its /readyz answers 200 (for
// serve: its Socket Mode connection is open). It is killed when t ends.
func (s *serveSoak) start(role, name string) *soakProcess {
	t := s.t
	t.Helper()
	s.mu.Lock()
	s.gen++
	logPath := filepath.Join(s.logs, fmt.Sprintf("%03d-%s.log", s.gen, name))
	s.mu.Unlock()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	opened := s.fake.Connections()
	cmd := exec.Command(s.bin, role)
	cmd.Env = append(os.Environ(),
		"OPENAI_API_KEY=sk-test-secret", "OPENAI_BASE_URL="+s.w.model.URL(), "SEARXNG_URL="+s.w.web.URL(),
		"FETCH_ALLOW_PRIVATE_NETWORKS=true", "REDIS_URL="+s.w.redis, "LLM_MAX_RETRIES=1",
		"WORKER_CONCURRENCY=4", "RUN_LEASE=2s", "HTTP_ADDR="+addr, "LOG_LEVEL=warn",
		"SLACK_APP_TOKEN="+s.fake.AppToken(), "SLACK_BOT_TOKEN="+s.fake.BotToken(), "SLACK_API_URL="+s.fake.APIURL(),
		"SLACK_PROGRESS_INTERVAL=1s", "RATE_LIMIT_USER_PER_HOUR=1000", "RATE_LIMIT_TEAM_PER_HOUR=1000")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wp := &workerProcess{cmd: cmd, addr: addr, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(wp.done) }() // owner: this process; ends when it exits
	t.Cleanup(wp.kill)
	eventually(t, 60*time.Second, "the "+name+"'s /readyz", func() bool {
		select {
		case <-wp.done:
			t.Fatalf("%s exited before it was ready; its log:\n%s", name, tail(logPath, 30))
		default:
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	p := &soakProcess{workerProcess: wp, role: role, name: name, mu: &s.mu}
	if role == "serve" {
		// Processes start one at a time and a serve is ready once connected:
		// the connection it opened is the newest.
		if got := s.fake.Connections(); got != opened+1 {
			t.Fatalf("%s opened %d Socket Mode connections, want 1", name, got-opened)
		}
		p.conn = opened + 1
		s.mu.Lock()
		s.conns[p.conn] = p
		s.mu.Unlock()
	}
	return p
}

// kill sends SIGKILL, waits for the process to be gone and, for a serve,
// for the fake Slack to see its connection close.
func (p *soakProcess) kill() {
	p.mu.Lock()
	if p.killedAt.IsZero() {
		p.killedAt = time.Now()
	}
	p.mu.Unlock()
	p.workerProcess.kill()
}

// diedWithin reports whether the serve that opened connection conn was
// killed within d after at.
func (s *serveSoak) diedWithin(conn int, at time.Time, d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.conns[conn]
	return p != nil && !p.killedAt.IsZero() && !p.killedAt.Before(at) && p.killedAt.Sub(at) <= d
}

// ask types `/research --mode guided <tag>-n: …` in the channel. When the
// process that had the command dies before acking it, Slack tells the
// person it failed, and they type it again — unless the request already
// shows in the channel.
func (s *serveSoak) ask(n int, prefix string) { s.askIn("guided", n, prefix) }

// askIn is ask with a mode.
func (s *serveSoak) askIn(mode string, n int, prefix string) {
	tag := fmt.Sprintf("%s-%d", prefix, n)
	req := request{tag: tag}
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ack, err := s.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research",
			Text: "--mode " + mode + " " + tag + ": How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel})
		cancel()
		if err == nil {
			req.acks, req.at = append(req.acks, ack), append(req.at, time.Now())
			break
		}
		if !errors.Is(err, slackfake.ErrConnectionLost) || try == 4 {
			s.t.Errorf("/research %s: %v", tag, err)
			break
		}
		time.Sleep(500 * time.Millisecond) // the person reads Slack's error
		if rootOf(s.fake, tag) != "" {
			break
		}
		s.mu.Lock()
		s.retried++
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.asked = append(s.asked, req)
	s.mu.Unlock()
}

// rootOf is the ts of the root message of the request tagged tag, or "".
func rootOf(fake *slackfake.Server, tag string) string {
	for _, m := range fake.Messages(channel) {
		if !m.Ephemeral && m.ThreadTS == "" && strings.HasPrefix(m.Text, "Research request: "+tag+":") {
			return m.TS
		}
	}
	return ""
}

// rootsTwice counts the requests with prefix whose root message shows more
// than once in the channel.
func rootsTwice(fake *slackfake.Server, prefix string) int {
	roots := map[string]int{}
	for _, m := range fake.Messages(channel) {
		if rest, ok := strings.CutPrefix(m.Text, "Research request: "); ok && !m.Ephemeral && m.ThreadTS == "" {
			if tag, _, ok := strings.Cut(rest, ":"); ok && strings.HasPrefix(tag, prefix+"-") {
				roots[tag]++
			}
		}
	}
	n := 0
	for _, c := range roots {
		if c > 1 {
			n++
		}
	}
	return n
}

// soakRuns are the runs of the requests with a prefix, once all are final.
type soakRuns struct {
	runs []*pipeline.Run
	// lostAfterAck are the requests acked that never became a run;
	// unexplainedLost those whose serve was not killed within 10 s of the ack.
	lostAfterAck, unexplainedLost []string
	twice                         int // requests that became two runs
}

// byTag finds the runs of the requests with prefix, by the tag in their question.
func (s *serveSoak) byTag(front *replica, prefix string) map[string][]*pipeline.Run {
	all, err := front.Engine.List(context.Background(), pipeline.RunFilter{RequestedBy: user, Limit: 1000})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string][]*pipeline.Run{}
	for _, r := range all {
		if tag, _, ok := strings.Cut(r.Question, ":"); ok && strings.HasPrefix(tag, prefix+"-") {
			out[tag] = append(out[tag], r)
		}
	}
	return out
}

// open counts the runs of the requests with prefix that are not final.
func (s *serveSoak) open(front *replica, prefix string) int {
	n := 0
	for _, rs := range s.byTag(front, prefix) {
		for _, r := range rs {
			if !r.Status.Final() || !r.Presented {
				n++
			}
		}
	}
	return n
}

// waitAllFinal waits until the run of every request made with prefix is
// final and shown (a request that never became a run is not waited for),
// and returns them.
func (s *serveSoak) waitAllFinal(front *replica, prefix string) soakRuns {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		byTag := s.byTag(front, prefix)
		left := 0
		var runs []*pipeline.Run
		for _, rs := range byTag {
			for _, r := range rs {
				runs = append(runs, r)
				if !r.Status.Final() || !r.Presented {
					left++
				}
			}
		}
		if left == 0 {
			out := soakRuns{runs: runs}
			s.mu.Lock()
			asked := append([]request(nil), s.asked...)
			s.mu.Unlock()
			for _, q := range asked {
				if !strings.HasPrefix(q.tag, prefix+"-") {
					continue
				}
				switch n := len(byTag[q.tag]); {
				case n > 1:
					out.twice++
				case n == 0:
					what := q.tag + ": nothing posted"
					if rootOf(s.fake, q.tag) != "" {
						what = q.tag + ": its root message posted, no run"
					}
					out.lostAfterAck = append(out.lostAfterAck, what)
					explained := false
					for i, a := range q.acks {
						explained = explained || s.diedWithin(a.Conn, q.at[i].Add(-time.Second), 11*time.Second)
					}
					if !explained {
						out.unexplainedLost = append(out.unexplainedLost, what+fmt.Sprintf(" (acked over connection(s) %v, whose serve was not killed within 10 s)", q.acks))
					}
				}
			}
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d runs of %q not final and shown after 5 min", left, prefix)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// dumpLogs shows the warnings and errors the processes logged.
func (s *serveSoak) dumpLogs() {
	files, _ := filepath.Glob(filepath.Join(s.logs, "*.log"))
	for _, f := range files {
		if out := tail(f, 20); out != "" {
			s.t.Logf("%s:\n%s", filepath.Base(f), out)
		}
	}
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// clicker is the person in the channel: they approve every checkpoint
// message that offers buttons after reading it for up to 1.5 s, a quarter
// of them with a double click, and click again when the buttons are still
// there 10 s after their last click (the click was lost with the process
// that had it).
type clicker struct {
	fake *slackfake.Server
	// slow is added to every reading time.
	slow time.Duration

	mu      sync.Mutex
	seen    map[string]*clickState // checkpoint id → the person's clicks on it
	clicks  int
	doubles int
	wg      sync.WaitGroup
}

type clickState struct {
	first, last time.Time
	read        time.Duration
	clicks      int
}

// start starts the person; stop ends them (and waits for their clicks).
func (p *clicker) start() (stop func()) {
	done := make(chan struct{})
	p.wg.Go(func() { // owner: the test; ends at stop
		tick := time.NewTicker(200 * time.Millisecond) // the person's glance at the channel
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				p.look()
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); p.wg.Wait() }) }
}

// look clicks what is due.
func (p *clicker) look() {
	now := time.Now()
	for _, m := range p.fake.Messages(channel) {
		if m.Ephemeral || !strings.Contains(string(m.Blocks), blockkit.ActionApprove) {
			continue
		}
		for _, inst := range approveValues(m.Blocks) {
			p.mu.Lock()
			st := p.seen[inst]
			if st == nil {
				st = &clickState{first: now, read: p.slow + time.Duration(rand.IntN(1500))*time.Millisecond}
				p.seen[inst] = st
			}
			due := st.clicks == 0 && now.Sub(st.first) >= st.read || st.clicks > 0 && now.Sub(st.last) >= 10*time.Second
			n := 1
			if due && st.clicks == 0 && rand.IntN(4) == 0 {
				n, p.doubles = 2, p.doubles+1
			}
			if due {
				st.clicks += n
				st.last = now
				p.clicks += n
			}
			p.mu.Unlock()
			for range n * btoi(due) {
				p.wg.Go(func() { // owner: the person; ends with its click's ack
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					_, _ = p.fake.ClickButton(ctx, user, channel, m.TS, blockkit.ActionApprove, "", "")
				})
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// counts are the clicks made, the double clicks among them, and the
// clicks the bot answered with "Nothing was changed" or "not applied".
func (p *clicker) counts() (clicks, doubles, refused int) {
	for _, m := range p.fake.Messages(channel) {
		if m.Ephemeral && m.ToUser == user && (strings.Contains(m.Text, "Nothing was changed") || strings.Contains(m.Text, "not applied")) {
			refused++
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clicks, p.doubles, refused
}

// approveValues are the values (checkpoint ids) of the Approve buttons in
// blocks.
func approveValues(blocks json.RawMessage) []string {
	var doc any
	if json.Unmarshal(blocks, &doc) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["action_id"] == blockkit.ActionApprove {
				if s, ok := x["value"].(string); ok {
					out = append(out, s)
				}
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(doc)
	return out
}

// outcomeText is the text of the message a finished run posts in its
// thread: its report (blockkit.ReportText), or its end without one.
var outcomeText = regexp.MustCompile(`^Research (report: .*|failed|cancelled|interrupted|partial|completed)$`)

// channelSeen is what the people in the channel saw of the soak's runs.
type channelSeen struct {
	posts, updates, reportFiles                  int
	outcomeTwice, outcomeMissing                 int // threads whose outcome was posted twice, or never
	fileTwice, fileMissing                       int // report files attached twice to a thread, or never (completed runs)
	checkpointTwice                              int // checkpoint attempts posted as two messages
	checkpointNever                              int // checkpoints never posted
	outcomePosts, checkpointPosts, progressPosts int
	progressTwice                                int // threads with two progress messages
	buttonsLeft                                  int // checkpoint messages that still offer buttons
	problems                                     []string
}

// readChannel counts, from the fake's record of every Web API call Slack
// accepted, what the channel showed of runs.
func readChannel(fake *slackfake.Server, soak soakRuns) channelSeen {
	var seen channelSeen
	outcomes := map[string]int{}        // thread → outcome posts
	progress := map[string]int{}        // thread → progress posts
	checkpointPosts := map[string]int{} // checkpoint id → posts offering it
	for _, c := range fake.Calls("chat.postMessage") {
		if c.Error != "" {
			continue
		}
		seen.posts++
		thread, text := c.Params["thread_ts"], c.Params["text"]
		switch {
		case outcomeText.MatchString(text):
			outcomes[thread]++
			seen.outcomePosts++
		case strings.HasPrefix(text, "Research progress: "):
			progress[thread]++
			seen.progressPosts++
		}
		for _, inst := range approveValues(json.RawMessage(c.Params["blocks"])) {
			checkpointPosts[inst]++
			seen.checkpointPosts++
		}
	}
	for _, c := range fake.Calls("chat.update") {
		if c.Error == "" {
			seen.updates++
		}
	}
	files := map[string]int{} // thread → report files
	for _, f := range fake.Files() {
		if f.Completed && strings.HasPrefix(f.Name, "research-") {
			files[f.ThreadTS]++
			seen.reportFiles++
		}
	}
	threads := map[string]bool{}
	for _, r := range soak.runs {
		thread := r.Origin.ThreadTS
		threads[thread] = true
		switch n := outcomes[thread]; {
		case n > 1:
			seen.outcomeTwice++
			seen.problems = append(seen.problems, fmt.Sprintf("run %s (%s): its outcome was posted %d times in thread %s", r.ID, r.Status, n, thread))
		case n == 0:
			seen.outcomeMissing++
			seen.problems = append(seen.problems, fmt.Sprintf("run %s (%s): no outcome posted in thread %s", r.ID, r.Status, thread))
		}
		switch n := files[thread]; {
		case n > 1:
			seen.fileTwice++
			seen.problems = append(seen.problems, fmt.Sprintf("run %s: its report file was attached %d times", r.ID, n))
		case n == 0 && r.Status == pipeline.StatusCompleted:
			seen.fileMissing++
			seen.problems = append(seen.problems, fmt.Sprintf("run %s: completed without its report file", r.ID))
		}
		if n := progress[thread]; n > 1 {
			seen.progressTwice++
			seen.problems = append(seen.problems, fmt.Sprintf("run %s: %d progress messages in its thread", r.ID, n))
		}
		for _, inst := range r.Checkpoints {
			switch n := checkpointPosts[inst.ID]; {
			case n > max(1, inst.Attempt):
				seen.checkpointTwice++
				seen.problems = append(seen.problems, fmt.Sprintf("run %s: checkpoint %s (%s, attempt %d) posted %d times", r.ID, inst.ID, inst.DefinitionID, inst.Attempt, n))
			case n == 0:
				seen.checkpointNever++
				seen.problems = append(seen.problems, fmt.Sprintf("run %s: checkpoint %s (%s) decided but never posted", r.ID, inst.ID, inst.DefinitionID))
			}
		}
	}
	for _, m := range fake.Messages(channel) {
		if !m.Ephemeral && threads[m.ThreadTS] && len(approveValues(m.Blocks)) > 0 {
			seen.buttonsLeft++
			seen.problems = append(seen.problems, fmt.Sprintf("message %s in thread %s still offers Approve after its run ended: %q", m.TS, m.ThreadTS, m.Text))
		}
	}
	sort.Strings(seen.problems)
	return seen
}

// soakServeKilledMidPost (TestSoak/serve_killed_mid-post): the worst moment
// for a kill, played on purpose rather than waited for. The only process,
// a `serve`, is killed with SIGKILL while Slack handles its chat.postMessage
// of a request's root message, a checkpoint or a run's outcome: the message
// is in the thread, the process never heard back, so it recorded nothing.
// The `serve` started in its place takes the run over and shows it; the
// request must still become a run, the thread must still show the
// checkpoint and the outcome once, and no message may still offer buttons
// once the run has ended.
//
// Each case failed before every such post was made once (bot/postonce.go:
// an intent marker before the post, the post's key in its metadata, a look
// before posting again) and a request's run was stored held before its root
// message (bot/heldruns.go): the outcome posted twice, a checkpoint posted
// twice or left with live buttons, a request acked and never started.
func soakServeKilledMidPost(t *testing.T) {
	bin := buildResearchbot(t)
	isCheckpoint := func(c slackfake.Call) bool { return len(approveValues(json.RawMessage(c.Params["blocks"]))) > 0 }
	for _, tc := range []struct {
		name, mode string
		target     func(slackfake.Call) bool
		// slow is how long the person takes to read a checkpoint: longer
		// than the takeover, the checkpoint is shown again before the click.
		slow time.Duration
	}{
		{"request", "auto", func(c slackfake.Call) bool { return strings.HasPrefix(c.Params["text"], "Research request: ") }, 0},
		{"report", "auto", func(c slackfake.Call) bool { return outcomeText.MatchString(c.Params["text"]) }, 0},
		{"checkpoint clicked at once", "guided", isCheckpoint, 0},
		{"checkpoint clicked after the takeover", "guided", isCheckpoint, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := startRedis(t)
			w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, nil)
			front := w.replica(w.redis, false)
			fake := slackfake.New(t)
			fake.AddChannel(channel, "research", true)
			fake.AddUser(user, "ada", "UTC")
			s := &serveSoak{t: t, bin: bin, w: w, fake: fake, logs: t.TempDir(), conns: map[int]*soakProcess{}}
			var mu sync.Mutex
			fired := false
			current := s.start("serve", "serve")
			killed := make(chan time.Time, 1)
			fake.OnCall(func(c slackfake.Call) *slackfake.Reply {
				if c.Method != "chat.postMessage" || !tc.target(c) {
					return nil
				}
				mu.Lock()
				defer mu.Unlock()
				if !fired { // the first such post only
					fired = true
					killed <- time.Now()
					current.kill() // before Slack answers: the post lands, its answer is lost
				}
				return nil
			})
			p := &clicker{fake: fake, seen: map[string]*clickState{}, slow: tc.slow}
			stopClicking := p.start()
			defer stopClicking()
			s.askIn(tc.mode, 0, "mid")
			var at time.Time
			select {
			case at = <-killed:
			case <-time.After(waitLimit):
				t.Fatalf("no %s was posted", tc.name)
			}
			mu.Lock()
			current = s.start("serve", "serve") // its successor
			mu.Unlock()
			soak := s.waitAllFinal(front, "mid")
			shown := time.Since(at)
			stopClicking()
			current.kill()
			seen := readChannel(fake, soak)
			set := w.settings()
			for _, r := range soak.runs {
				t.Logf("serve killed while Slack took its post (%s); the run, %v, was shown %s after the kill", tc.name, r.Status, shown.Round(10*time.Millisecond))
			}
			within(t, "requests acked that never became a run", len(soak.lostAfterAck), none, set)
			within(t, "requests that became two runs", soak.twice, none, set)
			within(t, "requests whose root message shows twice", rootsTwice(fake, "mid"), none, set)
			within(t, "threads that show their outcome twice", seen.outcomeTwice, none, set)
			within(t, "checkpoints posted twice (one checkpoint, one attempt, two messages)", seen.checkpointTwice, none, set)
			within(t, "checkpoint messages still offering buttons after their run ended", seen.buttonsLeft, none, set)
			for _, e := range append(soak.lostAfterAck, seen.problems...) {
				t.Error(e)
			}
		})
	}
}
