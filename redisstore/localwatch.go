package redisstore

import (
	"strconv"
	"sync"
)

// localWatchers are the Watches of one Store, by run: a save made through
// that Store hands them what it wrote in memory, so a run followed only by
// the process that advances it (a terminal run) is never announced through
// Redis.
type localWatchers struct {
	mu   sync.Mutex
	runs map[string]map[*localWatch]struct{}
}

// localWatch is the mailbox of one Watch: the latest save handed to it,
// "{version} {data}" as a save announces it, and a signal that it is there.
// A save never waits for the Watch: a newer save replaces one not yet taken.
type localWatch struct {
	mu      sync.Mutex
	msg     string
	version int64
	ready   chan struct{}
}

// add registers a Watch of the run.
func (l *localWatchers) add(runID string) *localWatch {
	lw := &localWatch{ready: make(chan struct{}, 1)}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string]map[*localWatch]struct{}{}
	}
	if l.runs[runID] == nil {
		l.runs[runID] = map[*localWatch]struct{}{}
	}
	l.runs[runID][lw] = struct{}{}
	return lw
}

// remove unregisters a Watch of the run.
func (l *localWatchers) remove(runID string, lw *localWatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.runs[runID], lw)
	if len(l.runs[runID]) == 0 {
		delete(l.runs, runID)
	}
}

// count is how many Watches of this Store follow the run.
func (l *localWatchers) count(runID string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs[runID])
}

// tell hands a save of the run ("{version} {data}") to its Watches.
func (l *localWatchers) tell(runID string, version int64, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.runs[runID]) == 0 {
		return
	}
	msg := strconv.FormatInt(version, 10) + " " + string(data)
	for lw := range l.runs[runID] {
		lw.put(version, msg)
	}
}

func (lw *localWatch) put(version int64, msg string) {
	lw.mu.Lock()
	if version > lw.version {
		lw.version, lw.msg = version, msg
	}
	lw.mu.Unlock()
	select {
	case lw.ready <- struct{}{}:
	default: // already signalled: the Watch takes the latest
	}
}

// take returns the latest save handed over.
func (lw *localWatch) take() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.msg
}
