package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"code.dny.dev/ssrf"
)

// blockedError is returned by the dialer when the SSRF guard refuses an
// address; Fetch turns it into an *Error with ReasonBlockedAddress.
type blockedError struct {
	host string
	err  error
}

func (e *blockedError) Error() string {
	if _, err := netip.ParseAddr(e.host); e.host == "" || err == nil {
		return e.err.Error()
	}
	return e.host + ": " + e.err.Error()
}

func (e *blockedError) Unwrap() error { return e.err }

// resolveError is returned by the dialer when a host name cannot be resolved.
type resolveError struct {
	host string
	err  error
}

func (e *resolveError) Error() string { return "cannot resolve " + e.host + ": " + e.err.Error() }
func (e *resolveError) Unwrap() error { return e.err }

// maxDialAddrs bounds how many resolved addresses one dial tries.
const maxDialAddrs = 4

// dialer opens connections for the HTTP transport. Unless allowPrivate, it
// checks every address a name resolves to with the ssrf guard before dialling
// any of them, and checks the address actually dialled again at dial time
// (as net.Dialer.Control, or just before the injected base dialer).
type dialer struct {
	guard        *ssrf.Guardian
	allowPrivate bool
	resolve      func(ctx context.Context, host string) ([]netip.Addr, error)
	base         func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newDialer(cfg Config) *dialer {
	d := &dialer{
		// Any port: the address classes are what matter; tcp4/tcp6 only.
		guard:        ssrf.New(ssrf.WithAnyPort()),
		allowPrivate: cfg.AllowPrivate,
		resolve:      cfg.Resolver,
		base:         cfg.DialContext,
	}
	if d.resolve == nil {
		d.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if d.base == nil {
		nd := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		if !d.allowPrivate {
			nd.Control = d.guard.Safe
		}
		d.base = nd.DialContext
	}
	return d
}

// DialContext is the http.Transport dial function.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	addrs, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if !d.allowPrivate {
		// Every answer must be acceptable: a name with one public and one
		// private address is refused outright.
		for _, a := range addrs {
			if err := d.guard.SafeAddr(a); err != nil {
				return nil, &blockedError{host: host, err: err}
			}
		}
	}
	if len(addrs) > maxDialAddrs {
		addrs = addrs[:maxDialAddrs]
	}
	var errs []error
	for _, a := range addrs {
		conn, err := d.dialAddr(ctx, network, netip.AddrPortFrom(a, uint16(port)))
		if err == nil {
			return conn, nil
		}
		var be *blockedError
		if errors.As(err, &be) || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// lookup returns the addresses for host: the literal itself for an IP
// literal (not unmapped, so ::ffff:10.0.0.1 is judged as written), otherwise
// the resolver's answers with IPv4-mapped forms unmapped.
func (d *dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	// Legacy numeric forms can reach here after IDNA mapping (①②⑦.① is
	// 127.1); never hand them to a resolver that might read them its own way.
	if a, isNum, err := parseLegacyIPv4(strings.ToLower(host)); isNum {
		if err != nil {
			return nil, &resolveError{host: host, err: err}
		}
		return []netip.Addr{a}, nil
	}
	if !d.allowPrivate && isLocalhostName(host) {
		return nil, &blockedError{host: host, err: errors.New("localhost names are not permitted")}
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, &resolveError{host: host, err: err}
	}
	if len(addrs) == 0 {
		return nil, &resolveError{host: host, err: errors.New("no addresses")}
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.Unmap())
	}
	return out, nil
}

// dialAddr dials one address, running the guard on exactly that address first.
func (d *dialer) dialAddr(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	if !d.allowPrivate {
		netw := "tcp6"
		if ap.Addr().Is4() {
			netw = "tcp4"
		}
		if err := d.guard.Safe(netw, ap.String(), nil); err != nil {
			return nil, &blockedError{err: err}
		}
	}
	conn, err := d.base(ctx, network, ap.String())
	if err != nil && isGuardError(err) {
		return nil, &blockedError{err: err}
	}
	return conn, err
}

func isGuardError(err error) bool {
	return errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) ||
		errors.Is(err, ssrf.ErrProhibitedPort) || errors.Is(err, ssrf.ErrInvalidHostPort)
}

func isLocalhostName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// normalizeURL checks that u is an absolute http(s) URL with a host and no
// credentials, and rewrites legacy numeric IPv4 hosts (2130706433, 0x7f.1,
// 017700000001, 127.1) to dotted-quad form, as the WHATWG URL standard (and
// every browser) does, so the guard judges the address they denote.
func normalizeURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		u.Scheme = strings.ToLower(u.Scheme)
	default:
		if u.Scheme == "" {
			return errors.New("URL is not absolute (no scheme)")
		}
		return fmt.Errorf("scheme %q is not allowed (http and https only)", u.Scheme)
	}
	if u.Opaque != "" {
		return errors.New("URL is opaque (missing //)")
	}
	if u.User != nil {
		return errors.New("credentials in URLs are not allowed")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("URL has no host")
	}
	port := u.Port()
	if strings.HasSuffix(u.Host, ":") && port == "" {
		u.Host = strings.TrimSuffix(u.Host, ":")
	}
	if strings.Contains(u.Host, "[") {
		return nil // IPv6 literal, judged by the guard as written
	}
	host = strings.ToLower(host)
	ip, isNum, err := parseLegacyIPv4(host)
	if err != nil {
		return fmt.Errorf("invalid numeric host %q: %w", host, err)
	}
	if isNum {
		host = ip.String()
	}
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else {
		u.Host = host
	}
	return nil
}

// parseLegacyIPv4 implements the WHATWG URL "IPv4 parser": if host "ends in a
// number" it must be an IPv4 address whose parts may be decimal, octal
// (leading 0) or hex (0x), with the last part filling the remaining bytes.
// isNum is false for ordinary domain names.
func parseLegacyIPv4(host string) (ip netip.Addr, isNum bool, err error) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if _, ok := parseIPv4Number(last); !ok && !isAllDigits(last) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errors.New("too many parts")
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, true, fmt.Errorf("bad part %q", p)
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, errors.New("part out of range")
		}
	}
	if nums[len(nums)-1] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, true, errors.New("last part out of range")
	}
	v := nums[len(nums)-1]
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil || n > 1<<32 {
		return 0, false
	}
	return n, true
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
