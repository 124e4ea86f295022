package app

import (
	"testing"
	"time"
)

// TestIndexScoresAreRefreshedRarelyButWithinTheRescuersWindow: a run's index
// scores are rewritten at most every couple of seconds with the default
// lease (each refresh is two Redis commands: at one a second they were
// about two commands a run), and always well within the rescuer's
// half-lease window (at most a quarter lease).
func TestIndexScoresAreRefreshedRarelyButWithinTheRescuersWindow(t *testing.T) {
	for _, lease := range []time.Duration{time.Second, 15 * time.Second, time.Minute} {
		if got := indexRefresh(lease); got > lease/4 || got <= 0 {
			t.Errorf("lease %v: index refresh %v, want in (0, %v]", lease, got, lease/4)
		}
	}
	if got := indexRefresh(15 * time.Second); got < 2*time.Second {
		t.Errorf("default lease: index refresh %v, want at least 2 s", got)
	}
}
