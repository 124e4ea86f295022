// Package retryafter reads an HTTP Retry-After header value, the one rule
// shared by every client that is asked to wait (the model client, the
// search backends).
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse interprets a Retry-After value (RFC 9110 §10.2.3): delay-seconds,
// or an HTTP date, which is read against now and gives 0 when it is past.
// Fractional seconds ("1.5") are accepted, as some providers send them.
// ok is false for an empty, negative or unreadable value.
func Parse(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs != secs { // negative or NaN
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}
