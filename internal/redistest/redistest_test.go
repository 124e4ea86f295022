package redistest

import (
	"errors"
	"net"
	"os/exec"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStartAnswers(t *testing.T) {
	_, c := Start(t)
	if err := c.Set(t.Context(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestLaunchReportsATakenPort takes a port first: redis-server cannot bind
// it, and launch says so (Start then tries another port) instead of
// waiting for a server that never comes.
func TestLaunchReportsATakenPort(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = launch(t, bin, l.Addr().(*net.TCPAddr).Port)
	if busy := (errBusy{}); !errors.As(err, &busy) {
		t.Fatalf("launch on a taken port = %v, want errBusy", err)
	}
}

// TestKillStopsTheServerAtOnce: after Kill nothing listens on the
// server's address any more.
func TestKillStopsTheServerAtOnce(t *testing.T) {
	s, c := Start(t)
	s.Kill()
	if conn, err := net.Dial("tcp", s.Addr); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after Kill", s.Addr)
	}
	if err := c.Ping(t.Context()).Err(); err == nil {
		t.Fatal("the killed server answered PING")
	}
	s.Kill() // a second Kill, and the test's cleanup, are harmless
}
