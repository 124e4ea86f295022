package redisstore

// A private queue forgotten by its own process. The queues of a NewQueues
// worker (a terminal run's, eval's) were made for this process alone, so
// the process knows every run in them: it created each one. The save that
// records the last of them finished and shown also forgets the queue's
// name ({p}queues) — its work and deadline indexes are empty by then, and
// Redis deleted them with their last entries — instead of leaving that to
// the next process's claim pass (abandoned.go), which stays the safety net
// for a process that died first.

import "sync"

// maxPrivateRuns bounds the runs remembered for one private queue; a queue
// past it is never forgotten here (the claim passes' clean-up does it).
const maxPrivateRuns = 4096

// privateQueues is shared by the Store and the Workers of one DB: this
// process's private queues (registered by DB.Worker for a NewQueues
// worker, before the process creates any run there) and, for each, the
// runs the Store created there whose outcome no save of it recorded shown.
type privateQueues struct {
	mu     sync.Mutex
	queues map[string]*privateQueue
}

// privateQueue is one private queue's runs not yet finished and shown.
type privateQueue struct {
	// mu guards runs; the save that forgets the queue holds it across its
	// round trip, so a create in the queue is sent either before that
	// save's decision (and then keeps the queue) or after the queue was
	// forgotten (and its script registers the queue again).
	mu   sync.Mutex
	runs map[string]struct{}
	// incomplete says runs no longer names every run created here
	// (maxPrivateRuns): the queue is not forgotten by a save any more.
	incomplete bool
}

func newPrivateQueues() *privateQueues {
	return &privateQueues{queues: map[string]*privateQueue{}}
}

// register notes queues as this process's own: made for it just now, with
// no run created in them yet.
func (p *privateQueues) register(queues []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range queues {
		if _, ok := p.queues[q]; !ok {
			p.queues[q] = &privateQueue{runs: map[string]struct{}{}}
		}
	}
}

// lookup returns queue's entry when it is a private queue of this process.
func (p *privateQueues) lookup(queue string) *privateQueue {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queues[queue]
}

// creating notes, before its create is sent, a run created in queue. The
// returned function takes the note back, for a create that certainly
// stored nothing; a create whose outcome is unknown keeps it (the queue
// is then not forgotten by a save, which is safe).
func (p *privateQueues) creating(queue, runID string) (storedNothing func()) {
	pq := p.lookup(queue)
	if pq == nil {
		return func() {}
	}
	pq.mu.Lock()
	defer pq.mu.Unlock()
	if _, ok := pq.runs[runID]; ok {
		return func() {}
	}
	if len(pq.runs) >= maxPrivateRuns {
		pq.incomplete = true
		return func() {}
	}
	pq.runs[runID] = struct{}{}
	return func() {
		pq.mu.Lock()
		defer pq.mu.Unlock()
		delete(pq.runs, runID)
	}
}

// finishing is asked by the save that records runID finished and shown:
// forget says that save should also forget queue, the run being the last
// of this process's private queue that was not. done must be called once
// the save is answered, with whether it wrote the run; until then a
// forgetting save keeps the queue's entry locked (see privateQueue.mu).
func (p *privateQueues) finishing(queue, runID string) (forget bool, done func(saved bool)) {
	pq := p.lookup(queue)
	if pq == nil {
		return false, func(bool) {}
	}
	pq.mu.Lock()
	_, mine := pq.runs[runID]
	if mine && len(pq.runs) == 1 && !pq.incomplete {
		return true, func(saved bool) {
			if saved {
				delete(pq.runs, runID)
			}
			pq.mu.Unlock()
		}
	}
	pq.mu.Unlock()
	return false, func(saved bool) {
		if saved && mine {
			pq.mu.Lock()
			defer pq.mu.Unlock()
			delete(pq.runs, runID)
		}
	}
}
