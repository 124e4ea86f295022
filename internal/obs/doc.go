// Package obs is what an operator sees of a researchbot process, the same
// for `serve` and `worker`: Prometheus metrics in the process's own
// registry (runs, steps, LLM calls, searches, fetches, the queue,
// checkpoint waits) and the /healthz, /readyz and /metrics endpoints. The
// Slack adapter adds its own counters to the same registry.
package obs
