package obs

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

// TestServerRunsUntilItsContextEnds: the listener is open once Listen
// returns (a request made before Run waits for it), Run serves /healthz,
// and it returns nil once its context ends, with nothing left running.
func TestServerRunsUntilItsContextEnds(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := Listen("127.0.0.1:0", Handler(New()), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(s.Addr().String(), Handler(New()), slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a second Listen on the same address succeeded")
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	got := make(chan string, 1)
	go func() { // owner: the test; ends with the request
		resp, err := client.Get("http://" + s.Addr().String() + "/healthz")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }() // owner: the test; ends with ctx
	if body := <-got; body != "ok\n" {
		t.Errorf("/healthz: %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := client.Get("http://" + s.Addr().String() + "/healthz"); err == nil {
		t.Error("the server still answers after Run returned")
	}
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }
