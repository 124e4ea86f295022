package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

const (
	// maxRobotsBytes is how much of a robots.txt is read (RFC 9309 asks for at
	// least 500 KiB); the rest is ignored.
	maxRobotsBytes = 512 << 10
	// maxRobotsTTL caps how long a robots.txt is trusted (RFC 9309 §2.4).
	maxRobotsTTL = 24 * time.Hour
	// maxRobotsMem bounds the in-memory robots cache.
	maxRobotsMem = 1024
)

type robotsEntry struct {
	data    *robotstxt.RobotsData
	expires time.Time
}

// robotsMemo is a small in-memory cache of parsed robots.txt files per origin.
type robotsMemo struct {
	mu sync.Mutex
	m  map[string]robotsEntry
}

func (r *robotsMemo) get(origin string, now time.Time) (*robotstxt.RobotsData, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.m[origin]
	if !ok || now.After(e.expires) {
		return nil, false
	}
	return e.data, true
}

func (r *robotsMemo) put(origin string, data *robotstxt.RobotsData, expires, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]robotsEntry)
	}
	if len(r.m) >= maxRobotsMem {
		for k, e := range r.m {
			if now.After(e.expires) {
				delete(r.m, k)
			}
		}
		for k := range r.m {
			if len(r.m) < maxRobotsMem {
				break
			}
			delete(r.m, k)
		}
	}
	r.m[origin] = robotsEntry{data: data, expires: expires}
}

func (f *Fetcher) robotsTTL() time.Duration {
	return min(f.cfg.CacheTTL, maxRobotsTTL)
}

// robotsRead is what the shared cache held for an origin's robots.txt when
// it was read together with a page's entry: value is nil when it held none.
type robotsRead struct{ value []byte }

// robotsKey is the cache key of origin's robots.txt.
func robotsKey(origin string) string { return "robots:v1:" + hashKey(origin) }

// checkRobots returns nil when robots.txt of u's origin allows our
// User-Agent to fetch u. rawURL is only used for error reporting.
func (f *Fetcher) checkRobots(ctx context.Context, rawURL string, u *url.URL) error {
	return f.checkRobotsWith(ctx, rawURL, u, nil)
}

// checkRobotsWith is checkRobots with the cache entry of the origin's
// robots.txt already read (nil: not read).
func (f *Fetcher) checkRobotsWith(ctx context.Context, rawURL string, u *url.URL, read *robotsRead) error {
	data, err := f.robotsFor(ctx, rawURL, u, read)
	if err != nil {
		return err
	}
	if !data.TestAgent(u.RequestURI(), f.cfg.UserAgent) {
		return newError(rawURL, ReasonRobots, "robots.txt of %s disallows %s", u.Host, u.RequestURI())
	}
	return nil
}

// robotsFor returns the parsed robots.txt of u's origin: from memory, from
// the shared cache, or downloaded. Concurrent lookups of one origin (the
// pages of a run on one host) share one download, made under the first
// caller's ctx; a caller whose ctx ends stops waiting at once, and when the
// first caller gave up, another one downloads.
func (f *Fetcher) robotsFor(ctx context.Context, rawURL string, u *url.URL, read *robotsRead) (*robotstxt.RobotsData, error) {
	origin := u.Scheme + "://" + u.Host
	for attempt := 0; ; attempt++ {
		if data, ok := f.robots.get(origin, f.cfg.Clock.Now()); ok {
			return data, nil
		}
		ch := f.robotsFlight.DoChan(origin, func() (any, error) {
			return f.loadOrDownloadRobots(ctx, rawURL, u, origin, read)
		})
		select {
		case res := <-ch:
			abandoned := errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded)
			if res.Err != nil && abandoned && ctx.Err() == nil && attempt < 2 {
				continue // the caller that downloaded gave up; we still wait
			}
			if res.Err != nil {
				return nil, res.Err
			}
			return res.Val.(*robotstxt.RobotsData), nil
		case <-ctx.Done():
			e := f.classify(ctx, rawURL, context.Cause(ctx))
			e.Detail = "robots.txt: " + e.Detail
			return nil, e
		}
	}
}

// loadOrDownloadRobots reads origin's robots.txt from the shared cache
// (unless read says what the cache held), or downloads (and caches) it,
// parses it and keeps it in memory.
func (f *Fetcher) loadOrDownloadRobots(ctx context.Context, rawURL string, u *url.URL, origin string, read *robotsRead) (*robotstxt.RobotsData, error) {
	now := f.cfg.Clock.Now()
	key := robotsKey(origin)
	var status int
	var body []byte
	var err error
	if read != nil {
		status, body, err = parseRobotsEntry(read.value)
	} else {
		status, body, err = f.loadRobots(ctx, key)
	}
	if err != nil {
		status, body, err = f.downloadRobots(ctx, rawURL, u.Scheme, u.Host)
		if err != nil {
			return nil, err
		}
		f.storeRobots(ctx, key, status, body)
	}
	data, perr := robotstxt.FromStatusAndBytes(status, body)
	if perr != nil {
		// A malformed robots.txt or an odd status (for example a 3xx left
		// over after redirects) is treated as "no robots.txt".
		data, _ = robotstxt.FromStatusAndBytes(http.StatusNotFound, nil)
	}
	f.robots.put(origin, data, now.Add(f.robotsTTL()), now)
	return data, nil
}

// loadRobots reads a cached robots.txt as "status\nbody"; any failure means "not cached".
func (f *Fetcher) loadRobots(ctx context.Context, key string) (int, []byte, error) {
	if f.cache == nil {
		return 0, nil, errors.New("no cache")
	}
	vals, err := f.cache.Get(ctx, key)
	if err != nil || len(vals) != 1 {
		return 0, nil, errors.New("not cached")
	}
	return parseRobotsEntry(vals[0])
}

// parseRobotsEntry reads a cached robots.txt, "status\nbody"; nil means "not cached".
func parseRobotsEntry(v []byte) (int, []byte, error) {
	if v == nil {
		return 0, nil, errors.New("not cached")
	}
	for i, c := range v {
		if c == '\n' {
			status, err := strconv.Atoi(string(v[:i]))
			if err != nil {
				return 0, nil, err
			}
			return status, v[i+1:], nil
		}
	}
	return 0, nil, errors.New("malformed cache entry")
}

func (f *Fetcher) storeRobots(ctx context.Context, key string, status int, body []byte) {
	if f.cache == nil {
		return
	}
	v := append([]byte(strconv.Itoa(status)+"\n"), body...)
	// Cache failures only cost a refetch.
	_ = f.cache.Set(context.WithoutCancel(ctx), key, v, f.robotsTTL())
}

// downloadRobots fetches origin/robots.txt. Connection-level failures are
// returned as *Error (the page itself could not be fetched either); HTTP
// statuses are returned for robotstxt to interpret (4xx allow, 5xx disallow).
func (f *Fetcher) downloadRobots(ctx context.Context, rawURL, scheme, host string) (int, []byte, error) {
	ru := &url.URL{Scheme: scheme, Host: host, Path: "/robots.txt"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ru.String(), nil)
	if err != nil {
		return 0, nil, newError(rawURL, ReasonBadScheme, "robots.txt URL: %v", err)
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/plain, */*;q=0.5")
	resp, err := f.robotsClient.Do(req)
	if err != nil {
		e := f.classify(ctx, rawURL, err)
		if e.Reason == ReasonTooManyRedirects {
			// RFC 9309 §2.3.1.2: treat as unavailable (allow).
			return http.StatusNotFound, nil, nil
		}
		if e.Reason != ReasonBlockedAddress {
			e.Detail = "robots.txt: " + e.Detail
		}
		return 0, nil, e
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, nil, nil
	}
	body, err := f.decodedBody(resp)
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			fe.URL = rawURL
			return 0, nil, fe
		}
		return 0, nil, newError(rawURL, ReasonNetwork, "robots.txt: %v", err)
	}
	b, err := readCapped(body, maxRobotsBytes, resp.ContentLength)
	if err != nil {
		e := f.classify(ctx, rawURL, err)
		e.Detail = fmt.Sprintf("robots.txt: %s", e.Detail)
		return 0, nil, e
	}
	return resp.StatusCode, b, nil
}
