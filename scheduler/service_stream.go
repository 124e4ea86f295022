package scheduler

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// Errors of a [Store] and the [Service]; test with errors.Is.
var (
	// ErrStreamNotFound: no stream has this id or name.
	ErrStreamNotFound = errors.New("scheduler: no such stream")
	// ErrNameTaken: another stream already has this name (names are compared by NameKey).
	ErrNameTaken = errors.New("scheduler: a stream with this name already exists")
	// ErrStreamConflict: the stream changed since it was read; re-read and try again.
	ErrStreamConflict = errors.New("scheduler: stream was changed by someone else")
	// ErrNotAllowed: only the stream's owner or a workspace admin may change it.
	ErrNotAllowed = errors.New("scheduler: only the stream's owner or a workspace admin may do this")
	// ErrDigestRunning: a digest of the stream is still running.
	ErrDigestRunning = errors.New("scheduler: a digest of this stream is still running")
	// ErrBadPolicy: the checkpoint policy is not one of auto and hold_draft.
	ErrBadPolicy = errors.New("scheduler: unknown checkpoint policy (use auto or hold_draft)")
)

// NameKey is the form under which stream names are compared: lower case, with
// surrounding space trimmed and inner runs of white space collapsed to one space.
func NameKey(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), " "))
}

// Policy is a stream's checkpoint policy for its unattended digests.
type Policy string

// Checkpoint policies.
const (
	// PolicyAuto: every checkpoint is approved automatically (the default).
	PolicyAuto Policy = "auto"
	// PolicyHoldDraft: the draft is held for the owner's approval before it is posted;
	// the other checkpoints are approved automatically.
	PolicyHoldDraft Policy = "hold_draft"
)

// Valid reports whether p is a known policy.
func (p Policy) Valid() bool { return p == PolicyAuto || p == PolicyHoldDraft }

// DigestStatus is where one digest of a stream stands.
type DigestStatus string

// Digest statuses. Completed, Partial, Failed and Cancelled mirror the run's final
// status; Skipped means the fire started no run; Swept means the run was stuck past
// the maximum digest duration and was given up (and asked to cancel).
const (
	DigestStarting  DigestStatus = "starting" // recorded, run being created
	DigestRunning   DigestStatus = "running"
	DigestCompleted DigestStatus = "completed"
	DigestPartial   DigestStatus = "partial"
	DigestFailed    DigestStatus = "failed"
	DigestCancelled DigestStatus = "cancelled"
	DigestSkipped   DigestStatus = "skipped"
	DigestSwept     DigestStatus = "swept"
)

// Final reports whether the digest will not change any more on its own.
func (s DigestStatus) Final() bool { return s != DigestStarting && s != DigestRunning }

// Trigger says what started a digest.
type Trigger string

// Digest triggers.
const (
	TriggerSchedule Trigger = "schedule" // a scheduled fire
	TriggerRunNow   Trigger = "run_now"  // "/research stream run NAME"
	TriggerDryRun   Trigger = "dry_run"  // a preview in the creation thread; it does not count as a digest
)

// DigestRecord is one digest of a stream (or one skipped fire).
type DigestRecord struct {
	RunID string `json:"run_id,omitempty"`
	// FireAt is the scheduled time, or the request time for run-now and dry runs.
	FireAt     time.Time    `json:"fire_at"`
	Trigger    Trigger      `json:"trigger"`
	StartedAt  time.Time    `json:"started_at,omitzero"`
	FinishedAt time.Time    `json:"finished_at,omitzero"`
	Status     DigestStatus `json:"status"`
	// NewItems counts the report's references: the new items the digest reported.
	NewItems   int  `json:"new_items"`
	NothingNew bool `json:"nothing_new,omitempty"`
	// Skipped says why a fire started no run.
	Skipped string `json:"skipped,omitempty"`
	// Note is anything else worth showing (a failure, a sweep).
	Note string `json:"note,omitempty"`
}

// Bounds of a stream record.
const (
	MaxDigestRecords = 50   // newest digests kept in Stream.Digests
	MaxKnown         = 5000 // newest URLs and fingerprints kept in Stream.Known
)

// runningStarting is Stream.Running while a scheduled digest's run is being created.
const runningStarting = "(starting)"

// Stream is a stored research stream: its spec, its schedule state and its digests.
type Stream struct {
	ID        string    `json:"id"`
	Version   int64     `json:"version"` // compare-and-set token, owned by the Store
	Spec      Spec      `json:"spec"`
	Owner     string    `json:"owner"` // Slack user id of the creator
	CreatedAt time.Time `json:"created_at"`
	Paused    bool      `json:"paused"`
	// LastFire is the scheduled time of the last fire handled (run or skipped).
	LastFire time.Time `json:"last_fire,omitzero"`
	// NextFire is the next scheduled time, zero while paused.
	NextFire time.Time `json:"next_fire,omitzero"`
	Policy   Policy    `json:"policy"`
	// Digests are the newest digests, oldest first, at most MaxDigestRecords.
	Digests []DigestRecord `json:"digests,omitempty"`
	// Known is what earlier digests reported: the document keys (normalised URLs,
	// "doi:…", "arXiv:…") and content fingerprints of the pages they cited, newest
	// last, at most MaxKnown of each.
	Known pipeline.Known `json:"known,omitzero"`
	// Running is the run id of the digest in flight, or "".
	Running string `json:"running,omitempty"`
	// Domains are the stream's domain rules, applied to each digest run
	// (SetDomains, NeverDomain). They are not part of Spec, so an edit
	// conversation never overwrites a site added meanwhile.
	Domains pipeline.DomainRules `json:"domains,omitzero"`
}

// Name is the stream's name.
func (s *Stream) Name() string { return s.Spec.Name }

// Clone returns a deep copy of s.
func (s *Stream) Clone() *Stream {
	c := *s
	c.Spec = s.Spec.clone()
	c.Digests = slices.Clone(s.Digests)
	c.Known.URLs = slices.Clone(s.Known.URLs)
	c.Known.Simhashes = slices.Clone(s.Known.Simhashes)
	c.Domains = pipeline.DomainRules{Only: slices.Clone(s.Domains.Only), Never: slices.Clone(s.Domains.Never)}
	return &c
}

// LastDigest returns the newest digest record that started a run, or nil.
func (s *Stream) LastDigest() *DigestRecord {
	for i := len(s.Digests) - 1; i >= 0; i-- {
		if s.Digests[i].Status != DigestSkipped {
			return &s.Digests[i]
		}
	}
	return nil
}

// CanChange reports whether actor may change the stream: its owner or an admin.
func (s *Stream) CanChange(actor string, isAdmin bool) bool {
	return isAdmin || (actor != "" && actor == s.Owner)
}

// addDigest appends a record and keeps the newest MaxDigestRecords.
func (s *Stream) addDigest(d DigestRecord) {
	s.Digests = append(s.Digests, d)
	if n := len(s.Digests) - MaxDigestRecords; n > 0 {
		s.Digests = slices.Delete(s.Digests, 0, n)
	}
}

// digestFor returns the record of run id; failing that, the record still being
// started (a run id not yet written back); or nil.
func (s *Stream) digestFor(runID string) *DigestRecord {
	for i := len(s.Digests) - 1; i >= 0; i-- {
		if s.Digests[i].RunID == runID && runID != "" {
			return &s.Digests[i]
		}
	}
	for i := len(s.Digests) - 1; i >= 0; i-- {
		if s.Digests[i].Status == DigestStarting && s.Digests[i].RunID == "" {
			return &s.Digests[i]
		}
	}
	return nil
}

// addKnown adds document keys and fingerprints to s.Known, without duplicates,
// keeping the newest MaxKnown of each.
func (s *Stream) addKnown(keys []string, hashes []uint64) {
	for _, k := range keys {
		if k == "" {
			continue
		}
		if i := slices.Index(s.Known.URLs, k); i >= 0 {
			s.Known.URLs = slices.Delete(s.Known.URLs, i, i+1)
		}
		s.Known.URLs = append(s.Known.URLs, k)
	}
	for _, h := range hashes {
		if h == 0 {
			continue
		}
		if i := slices.Index(s.Known.Simhashes, h); i >= 0 {
			s.Known.Simhashes = slices.Delete(s.Known.Simhashes, i, i+1)
		}
		s.Known.Simhashes = append(s.Known.Simhashes, h)
	}
	if n := len(s.Known.URLs) - MaxKnown; n > 0 {
		s.Known.URLs = slices.Delete(s.Known.URLs, 0, n)
	}
	if n := len(s.Known.Simhashes) - MaxKnown; n > 0 {
		s.Known.Simhashes = slices.Delete(s.Known.Simhashes, 0, n)
	}
}
