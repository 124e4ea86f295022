package fetch

import (
	"context"
	"net/url"
)

// HostCheck says why a host may not be fetched from ("" when it may). A
// caller sets one per fetch (WithHostCheck), for example to apply a
// research run's domain rules.
type HostCheck func(host string) string

type hostCheckKey struct{}

// WithHostCheck returns ctx carrying check: a Fetch under it refuses, with
// ReasonExcludedHost and check's reason, a URL, a redirect target or a
// cached page's final URL whose host check refuses. The refused host is
// never contacted.
func WithHostCheck(ctx context.Context, check HostCheck) context.Context {
	return context.WithValue(ctx, hostCheckKey{}, check)
}

// refusedHost returns the reason ctx's host check gives for u's host, or "".
func refusedHost(ctx context.Context, u *url.URL) string {
	check, _ := ctx.Value(hostCheckKey{}).(HostCheck)
	if check == nil {
		return ""
	}
	return check(u.Hostname())
}
