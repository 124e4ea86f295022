package scheduler

import (
	"context"
	"time"
)

// Store keeps research streams. The Redis implementation is redisstore.Streams.
//
// Stream names are unique within one store: one researchbot deployment serves one
// Slack workspace (its bot token belongs to that workspace), so a name is unique per
// workspace, and "/research stream show NAME" finds a stream whoever created it.
// Names are compared by [NameKey]: case-insensitively, with runs of spaces collapsed.
// A stream's name is fixed when it is created.
type Store interface {
	// Create stores a new stream at Version 1. s.ID must be set; it fails with
	// ErrNameTaken when the name is in use.
	Create(ctx context.Context, s *Stream) error
	// Get returns the stream with this id, or ErrStreamNotFound.
	Get(ctx context.Context, id string) (*Stream, error)
	// GetByName returns the stream with this name (compared by NameKey), or ErrStreamNotFound.
	GetByName(ctx context.Context, name string) (*Stream, error)
	// List returns every stream, oldest first.
	List(ctx context.Context) ([]*Stream, error)
	// Update writes s if the stored version still equals s.Version, then increments
	// s.Version; otherwise it returns ErrStreamConflict and writes nothing. It returns
	// ErrStreamNotFound when the stream was deleted.
	Update(ctx context.Context, s *Stream) error
	// Delete removes the stream and frees its name; ErrStreamNotFound if it is gone.
	Delete(ctx context.Context, id string) error
	// ClaimFire claims the digest of one stream at one scheduled time: exactly one
	// caller, across every replica, gets true until ttl has passed.
	ClaimFire(ctx context.Context, streamID string, fireAt time.Time, ttl time.Duration) (bool, error)
}
