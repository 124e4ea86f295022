// Package fetch downloads web pages safely and extracts their readable text.
//
// Every connection, redirects and robots.txt included, goes through an SSRF
// guard (code.dny.dev/ssrf): names are resolved first and every answer is
// checked, then the address actually dialled is checked again at dial time.
// Loopback, private, link-local, multicast, unspecified, CGNAT, cloud
// metadata and IPv4-mapped or NAT64 forms of them are refused unless
// Config.AllowPrivate is set. Legacy numeric hosts (2130706433, 0x7f.1,
// 017700000001) are read as the IPv4 addresses browsers read them as, and
// judged as such.
//
// A fetch follows at most MaxRedirects redirects over http and https only,
// ends within Timeout, reads at most MaxBytes of body after decompression,
// accepts only text/html, application/xhtml+xml, text/plain and PDF, obeys
// robots.txt for its User-Agent, runs at
// most PerHostConcurrency fetches per host at once, and caches successful
// pages for CacheTTL. An HTML page is read by package extract
// (extract.HTML: main text and metadata by go-trafilatura, rendered as
// Markdown), the same code that reads HTML files given to a run, shared in
// Slack or kept in the document collection. A PDF,
// known by its Content-Type or by its body starting with "%PDF-" (never by
// a ".pdf" suffix), is read page by page by package extract within the
// same byte limit, MaxPDFPages pages and the fetch's deadline; one that
// cannot be read (encrypted, no text layer, damaged) fails with
// ReasonUnreadable and the reason in words.
//
// Page text is untrusted data: nothing here interprets it.
package fetch

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/coder/quartz"
	"golang.org/x/sync/singleflight"

	doctext "github.com/researchbot/researchbot/extract"
)

// Config configures a Fetcher. Zero fields take the documented defaults.
type Config struct {
	// AllowPrivate lifts the SSRF guard (intranets, tests). The caller reads
	// FETCH_ALLOW_PRIVATE_NETWORKS=true into it.
	AllowPrivate bool
	// Timeout bounds one whole Fetch (robots.txt, redirects and body); default 20s.
	Timeout time.Duration
	// MaxBytes bounds the body after decompression; default 5 MiB.
	MaxBytes int64
	// MaxRedirects is the most redirects followed; default 5.
	MaxRedirects int
	// MaxTextRunes caps Page.Text; default 20000.
	MaxTextRunes int
	// MaxPDFPages is how many pages of a PDF are read; default 300.
	MaxPDFPages int
	// PerHostConcurrency is how many fetches may run against one host at
	// once; default 6, the connections a browser opens to one host, so the
	// pages of a run that share a host are read together.
	PerHostConcurrency int
	// UserAgent is sent with every request and matched against robots.txt;
	// default "researchbot/1.0 (+https://github.com/researchbot/researchbot)".
	UserAgent string
	// CacheTTL is how long a fetched page (and robots.txt, at most 24h) is cached; default 24h.
	CacheTTL time.Duration

	// Resolver maps a host name to addresses; default net.DefaultResolver.
	// A test seam: tests map names to addresses without DNS.
	Resolver func(ctx context.Context, host string) ([]netip.Addr, error)
	// DialContext is the base dialer, called with an "ip:port" address only
	// after the guard has accepted that address; default a net.Dialer whose
	// Control is the guard. A test seam to observe and redirect dials.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Clock stamps the pages fetched; nil means the real clock.
	Clock quartz.Clock
}

// Default values for Config. The bounds on a body and its text are
// extract's, so a fetched document and a file given to a run are held to the
// same ones.
const (
	DefaultTimeout            = 20 * time.Second
	DefaultMaxBytes           = doctext.DefaultMaxBytes
	DefaultMaxRedirects       = 5
	DefaultMaxTextRunes       = doctext.DefaultMaxRunes
	DefaultMaxPDFPages        = doctext.DefaultMaxPages
	DefaultPerHostConcurrency = 6
	DefaultUserAgent          = "researchbot/1.0 (+https://github.com/researchbot/researchbot)"
	DefaultCacheTTL           = 24 * time.Hour
)

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = DefaultMaxRedirects
	}
	if c.MaxTextRunes <= 0 {
		c.MaxTextRunes = DefaultMaxTextRunes
	}
	if c.MaxPDFPages <= 0 {
		c.MaxPDFPages = DefaultMaxPDFPages
	}
	if c.PerHostConcurrency <= 0 {
		c.PerHostConcurrency = DefaultPerHostConcurrency
	}
	c.UserAgent = cmp.Or(c.UserAgent, DefaultUserAgent)
	if c.CacheTTL <= 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	if c.Clock == nil {
		c.Clock = quartz.NewReal()
	}
	return c
}

// Page is a fetched page with its extracted text. Every string in it comes
// from the web and is untrusted.
type Page struct {
	// URL is the URL passed to Fetch; FinalURL is where redirects ended;
	// CanonicalURL is the page's declared canonical URL, or FinalURL.
	URL, FinalURL, CanonicalURL string
	Title, Author               string
	// Published is the publication date found in the page, zero if none.
	Published time.Time
	// Text is the extracted main text (Markdown-ish), at most MaxTextRunes runes.
	Text string
	// Truncated reports that Text was cut to MaxTextRunes.
	Truncated bool
	// ContentType is the media type of the body (without parameters).
	ContentType string
	// Kind is "pdf" for a PDF and "" for a web page or plain text.
	Kind string `json:",omitempty"`
	// PageStarts holds, for a PDF, the byte offset in Text at which each
	// page read starts (page n, from 1, starts at PageStarts[n-1]).
	PageStarts []int `json:",omitempty"`
	// PageCount is how many pages a PDF has, read or not.
	PageCount int `json:",omitempty"`
	// Note says what a PDF's reading left out ("more than 300 pages: read
	// the first 300").
	Note       string `json:",omitempty"`
	StatusCode int
	FetchedAt  time.Time
}

// Fetcher fetches pages. It is safe for concurrent use; Close releases its
// idle connections.
type Fetcher struct {
	cfg          Config
	cache        Cache
	transport    *http.Transport
	client       *http.Client
	robotsClient *http.Client
	hosts        *hostLimiter
	robots       robotsMemo
	robotsFlight singleflight.Group
}

// New returns a Fetcher for cfg. cache may be nil (no caching beyond an
// in-memory robots.txt cache).
func New(cfg Config, cache Cache) *Fetcher {
	cfg = cfg.withDefaults()
	d := newDialer(cfg)
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would bypass the guard
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    cfg.PerHostConcurrency,
		IdleConnTimeout:        30 * time.Second,
		DisableCompression:     true, // we decompress ourselves, counting bytes after decompression
		MaxResponseHeaderBytes: 64 << 10,
	}
	f := &Fetcher{cfg: cfg, cache: cache, transport: tr, hosts: newHostLimiter(cfg.PerHostConcurrency)}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect(true)}
	f.robotsClient = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect(false)}
	return f
}

// Close closes idle connections. The Fetcher remains usable.
func (f *Fetcher) Close() { f.transport.CloseIdleConnections() }

// Fetch downloads rawURL and extracts its text. Expected failures are
// returned as *Error with a Reason; a cached page is returned without any
// network access.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (Page, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return Page{}, newError(rawURL, ReasonBadScheme, "invalid URL")
	}
	if err := normalizeURL(u); err != nil {
		return Page{}, newError(rawURL, ReasonBadScheme, "%v", err)
	}
	u.Fragment, u.RawFragment = "", ""
	if why := refusedHost(ctx, u); why != "" {
		return Page{}, newError(rawURL, ReasonExcludedHost, "%s", why)
	}
	key := "page:v1:" + hashKey(u.String())
	p, ok, robots := f.cachedPage(ctx, key, u)
	if ok {
		if fu, err := url.Parse(p.FinalURL); err == nil {
			if why := refusedHost(ctx, fu); why != "" {
				return Page{}, newError(rawURL, ReasonExcludedHost, "redirect to %s: %s", clip(p.FinalURL), why)
			}
		}
		p.URL = rawURL
		return p, nil
	}

	fctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	release, err := f.hosts.acquire(fctx, strings.ToLower(u.Host))
	if err != nil {
		return Page{}, f.classify(fctx, rawURL, err)
	}
	defer release()

	if err := f.checkRobotsWith(fctx, rawURL, u, robots); err != nil {
		return Page{}, err
	}
	p, err = f.get(fctx, rawURL, u)
	if err != nil {
		return Page{}, err
	}
	if f.cache != nil {
		if b, err := json.Marshal(p); err == nil {
			// Cache failures only cost a refetch.
			_ = f.cache.Set(context.WithoutCancel(ctx), key, b, f.cfg.CacheTTL)
		}
	}
	return p, nil
}

// cachedPage reads the page cached under key. When the robots.txt of u's
// origin is not in memory, its cache entry is read in the same command
// (one MGET, not two GETs) and returned for the robots check that follows
// a miss; robots is nil when it was not read (or the read failed).
func (f *Fetcher) cachedPage(ctx context.Context, key string, u *url.URL) (p Page, ok bool, robots *robotsRead) {
	if f.cache == nil {
		return Page{}, false, nil
	}
	keys := []string{key}
	origin := u.Scheme + "://" + u.Host
	if _, known := f.robots.get(origin, f.cfg.Clock.Now()); !known {
		keys = append(keys, robotsKey(origin))
	}
	vals, err := f.cache.Get(ctx, keys...)
	if err != nil || len(vals) != len(keys) {
		return Page{}, false, nil
	}
	if len(keys) == 2 {
		robots = &robotsRead{value: vals[1]}
	}
	if vals[0] == nil || json.Unmarshal(vals[0], &p) != nil {
		return Page{}, false, robots
	}
	return p, true, robots
}

func hashKey(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
