package retryafter

import (
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"   ", 0, false},
		{"0", 0, true},
		{"3", 3 * time.Second, true},
		{" 1.5 ", 1500 * time.Millisecond, true},
		{"86400", 24 * time.Hour, true},
		{"-2", 0, false},
		{"NaN", 0, false},
		{"soon", 0, false},
		{now.Add(20 * time.Second).Format(http.TimeFormat), 20 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Thu, 01 Jan 2026 00:00:07 GMT", 7 * time.Second, true},
	}
	for _, tc := range cases {
		got, ok := Parse(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Parse(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
