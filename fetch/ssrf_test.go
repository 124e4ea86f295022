package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"code.dny.dev/ssrf"
)

// publicIP is what "public.example" resolves to in these tests. Nothing is
// ever sent to it: the recording dialer connects it to a loopback server.
const publicIP = "93.184.215.14"

// dialRecorder is an injected base dialer. It records every address it is
// asked to dial and connects only to loopback servers: the public test
// address goes to the site server, anything else (which the guard should
// have refused) goes to the sink, which counts connections.
type dialRecorder struct {
	site, sink string
	mu         sync.Mutex
	dials      []string
}

func (d *dialRecorder) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dials = append(d.dials, addr)
	d.mu.Unlock()
	target := d.sink
	if addr == net.JoinHostPort(publicIP, "80") {
		target = d.site
	}
	var nd net.Dialer
	return nd.DialContext(ctx, "tcp", target)
}

func (d *dialRecorder) recorded() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dials)
}

// fakeDNS is an injected Resolver over a fixed table.
func fakeDNS(table map[string][]string) func(ctx context.Context, host string) ([]netip.Addr, error) {
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		ips, ok := table[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var out []netip.Addr
		for _, s := range ips {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
}

type ssrfHarness struct {
	f         *Fetcher
	rec       *dialRecorder
	sinkConns *atomic.Int32
}

func newSSRFHarness(t *testing.T, resolver func(context.Context, string) ([]netip.Addr, error)) *ssrfHarness {
	t.Helper()
	var sinkConns atomic.Int32
	sink := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body><p>secret internal data</p></body></html>")
	}))
	sink.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			sinkConns.Add(1)
		}
	}
	sink.Start()
	t.Cleanup(sink.Close)

	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", http.NotFound)
	mux.HandleFunc("/", serveHTML(simplePage("Public page")))
	for path, target := range map[string]string{
		"/to-internal":   "http://internal.example/",
		"/to-metadata":   "http://169.254.169.254/latest/meta-data/",
		"/to-loopback":   "http://127.0.0.1/",
		"/to-decimal":    "http://2130706433/",
		"/to-mapped":     "http://[::ffff:10.0.0.5]/",
		"/to-localhost":  "http://localhost:8080/admin",
		"/to-https-priv": "https://192.168.1.1/",
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target, http.StatusFound)
		})
	}
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	rec := &dialRecorder{site: site.Listener.Addr().String(), sink: sink.Listener.Addr().String()}
	f := New(Config{Resolver: resolver, DialContext: rec.DialContext, Timeout: 5 * time.Second}, nil)
	t.Cleanup(f.Close)
	return &ssrfHarness{f: f, rec: rec, sinkConns: &sinkConns}
}

func (h *ssrfHarness) assertNothingReached(t *testing.T) {
	t.Helper()
	if n := h.sinkConns.Load(); n != 0 {
		t.Errorf("the sink (a refused address) was connected to %d times", n)
	}
	for _, a := range h.rec.recorded() {
		if a != net.JoinHostPort(publicIP, "80") {
			t.Errorf("dialer was asked to dial refused address %s", a)
		}
	}
}

func TestSSRFBlockedTargets(t *testing.T) {
	h := newSSRFHarness(t, fakeDNS(map[string][]string{
		"public.example":           {publicIP},
		"internal.example":         {"10.0.0.5"},
		"mixed.example":            {publicIP, "192.168.1.20"},
		"mapped.example":           {"::ffff:10.0.0.5"},
		"nat64.example":            {"64:ff9b::a9fe:a9fe"},
		"ula.example":              {"fd00::1"},
		"metadata.google.internal": {"169.254.169.254"},
		"cgnat.example":            {"100.64.1.1"},
		"localhost":                {"127.0.0.1", "::1"},
	}))
	ctx := context.Background()

	// The harness itself works: a public name is fetched through it.
	p, err := h.f.Fetch(ctx, "http://public.example/")
	if err != nil || p.Title != "Public page" {
		t.Fatalf("public page: %+v, %v", p, err)
	}

	for _, u := range []string{
		"http://127.0.0.1/",
		"http://127.0.0.1:8080/",
		"http://127.9.9.9/",
		"http://[::1]/",
		"http://0.0.0.0/",
		"http://0/",
		"http://10.1.2.3/",
		"https://10.0.0.1/",
		"http://172.16.0.1/",
		"http://172.31.255.254/",
		"http://192.168.0.1/",
		"http://100.64.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://017700000001/",
		"http://0x7f000001/",
		"http://127.1/",
		"http://①②⑦.⓪.⓪.①/",
		"http://①②⑦.①/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[64:ff9b::7f00:1]/",
		"http://[fe80::1]/",
		"http://[fe80::1%25eth0]/",
		"http://[::]/",
		"http://224.0.0.1/",
		"http://[ff02::1]/",
		"http://255.255.255.255/",
		"http://localhost/",
		"http://LOCALHOST./",
		"http://app.localhost/",
		"http://internal.example/",
		"http://mixed.example/",
		"http://mapped.example/",
		"http://nat64.example/",
		"http://ula.example/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://cgnat.example/",
		"http://public.example/to-internal",
		"http://public.example/to-metadata",
		"http://public.example/to-loopback",
		"http://public.example/to-decimal",
		"http://public.example/to-mapped",
		"http://public.example/to-localhost",
		"http://public.example/to-https-priv",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := h.f.Fetch(ctx, u)
			wantReason(t, err, ReasonBlockedAddress)
		})
	}
	// Obfuscated hosts that do not even parse are refused as bad URLs.
	for _, u := range []string{
		"http://%31%32%37.0.0.1/",
		"http://０x７f.1/",
		"http://0x7f.1.2.3.4/",
		"http://127.0.0.1:80@evil.example/",
		"http://evil.example@127.0.0.1/",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := h.f.Fetch(ctx, u)
			wantReason(t, err, ReasonBadScheme)
		})
	}
	h.assertNothingReached(t)
}

// A name that answers with a public address first and a private one later
// (DNS rebinding) is checked again on every new connection.
func TestSSRFRebindingCheckedPerConnection(t *testing.T) {
	var calls atomic.Int32
	resolver := func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host != "rebind.example" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr(publicIP)}, nil
		}
		return []netip.Addr{netip.MustParseAddr("10.0.0.5")}, nil
	}
	h := newSSRFHarness(t, resolver)
	// Close idle connections after robots.txt so the page needs a new dial.
	h.f.transport.DisableKeepAlives = true
	_, err := h.f.Fetch(context.Background(), "http://rebind.example/")
	wantReason(t, err, ReasonBlockedAddress)
	if calls.Load() < 2 {
		t.Fatalf("resolver called %d times, want a fresh resolution per connection", calls.Load())
	}
	h.assertNothingReached(t)
}

// The guard runs on the exact address before the injected base dialer.
func TestDialerGuardsActualAddressBeforeBaseDialer(t *testing.T) {
	var called atomic.Int32
	d := newDialer(Config{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			called.Add(1)
			return nil, errors.New("must not be called")
		},
	}.withDefaults())
	for _, a := range []string{"10.0.0.5:80", "169.254.169.254:80", "[::ffff:127.0.0.1]:443", "[64:ff9b::a00:5]:80"} {
		_, err := d.dialAddr(context.Background(), "tcp", netip.MustParseAddrPort(a))
		var be *blockedError
		if !errors.As(err, &be) {
			t.Errorf("dialAddr(%s) = %v, want blocked", a, err)
		}
	}
	if called.Load() != 0 {
		t.Errorf("base dialer called %d times", called.Load())
	}
}

// Without an injected dialer the guard is the net.Dialer's Control: a real
// loopback listener never sees a connection.
func TestDialerControlRefusesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	d := newDialer(Config{}.withDefaults())
	// Call the base dialer directly, skipping the pre-dial check, to prove
	// that Control alone refuses the address.
	_, err = d.base(context.Background(), "tcp", ln.Addr().String())
	if !errors.Is(err, ssrf.ErrProhibitedIP) {
		t.Errorf("base dial = %v, want ssrf.ErrProhibitedIP", err)
	}
	_, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
	var be *blockedError
	if !errors.As(err, &be) {
		t.Errorf("DialContext = %v, want blocked", err)
	}
	ln.Close()
	<-done
	if n := accepted.Load(); n != 0 {
		t.Errorf("listener accepted %d connections", n)
	}

	// With AllowPrivate the same address is reachable.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	c, err := newDialer(Config{AllowPrivate: true}.withDefaults()).DialContext(context.Background(), "tcp", ln2.Addr().String())
	if err != nil {
		t.Fatalf("AllowPrivate dial: %v", err)
	}
	c.Close()
}

// An unresolvable name is a network error, not a block.
func TestSSRFUnknownHostIsNetworkError(t *testing.T) {
	h := newSSRFHarness(t, fakeDNS(nil))
	_, err := h.f.Fetch(context.Background(), "http://nowhere.example/")
	wantReason(t, err, ReasonNetwork)
	h.assertNothingReached(t)
}
