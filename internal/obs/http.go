package obs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one thing /readyz asks: its name and whether it is ready.
type Check struct {
	Name  string
	Ready func(ctx context.Context) error
}

// Handler serves /healthz (the process is up), /readyz (every check
// passes) and /metrics (Prometheus).
func Handler(m *Metrics, checks ...Check) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ctx, cancel := context.WithTimeout(r.Context(), scrapeTimeout)
		defer cancel()
		var problems []string
		for _, c := range checks {
			if err := c.Ready(ctx); err != nil {
				problems = append(problems, c.Name+": "+err.Error())
			}
		}
		if len(problems) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(strings.Join(problems, "\n") + "\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	return mux
}

// Server serves a handler on a listener that is open from Listen on,
// until the context of Run ends.
type Server struct {
	ln  net.Listener
	srv *http.Server
	log *slog.Logger
}

// Listen opens the listener of h on addr (HTTP_ADDR); Run serves it.
func Listen(addr string, h http.Handler, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health and metrics listener on %s (HTTP_ADDR): %w", addr, err)
	}
	log.Info("serving health and metrics", "addr", ln.Addr().String())
	return &Server{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}, log: log}, nil
}

// Run serves until ctx ends, then shuts the server down (waiting up to 5 s
// for requests in flight) and returns nil. A server that fails is logged,
// not fatal: the process goes on without its endpoints until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	shut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(shut)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(sctx)
	})
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Error("health and metrics server stopped", "err", err)
	}
	if stop() {
		<-ctx.Done() // it failed on its own: wait for the process to end
		s.Close()
		return nil
	}
	<-shut
	return nil
}

// Close closes the listener of a server that is not run.
func (s *Server) Close() { _ = s.srv.Close(); _ = s.ln.Close() }
