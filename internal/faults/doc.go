// Package faults holds researchbot's fault suite: tests, behind the build
// tag "faults", that break what a run depends on — the Redis server (kill -9,
// restarts, latency and outages through a real TCP proxy), the model (429,
// 503, hangs, malformed and cut-off answers), the workers (killed mid-step,
// partitioned from Redis) and the people (double clicks across replicas,
// approve and reject at once) — and check that no run is lost, doubled or
// stalled and nobody is told a falsehood. Each test prints its figures, each
// beside its bound — a rule over RUN_LEASE or another setting, with its value
// for the defaults — and fails when a figure is over its bound (within, in
// figures_test.go: the suite's one rule for a FIGURE line).
//
// Run it with `make faults` (CI does, after `make test`); `make soak` runs
// the long soak (TestSoak, tags "faults soak": worker replicas in this
// process, then real worker processes killed with SIGKILL, then real serve
// and worker processes killed with SIGKILL behind the fake Slack). The
// package has no non-test code.
package faults
