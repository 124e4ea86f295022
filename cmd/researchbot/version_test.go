package main

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	checkout := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/researchbot/researchbot", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2025-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	installed := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/researchbot/researchbot", Version: "v1.4.0"},
	}
	for _, tc := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            string
	}{
		{"link-time flags win", "v1.2.3", "fedcba9876543210fedcba9876543210fedcba98", checkout,
			"researchbot v1.2.3 (commit fedcba987654; go1.26.8 " + platform + ")"},
		{"built from a checkout", "", "", checkout,
			"researchbot devel (commit 0123456789ab, 2025-01-02T03:04:05Z, with uncommitted changes; go1.26.8 " + platform + ")"},
		{"go install of a release", "", "", installed,
			"researchbot v1.4.0 (go1.26.8 " + platform + ")"},
		{"no build info", "", "", nil,
			"researchbot devel (" + runtime.Version() + " " + platform + ")"},
		{"a commit that is not hex is kept whole", "v1", "release-build-42", nil,
			"researchbot v1 (commit release-build-42; " + runtime.Version() + " " + platform + ")"},
	} {
		if got := versionLine(tc.version, tc.commit, tc.bi); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, noEnv, nil, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "researchbot ") || !strings.Contains(out, runtime.Version()) || strings.Count(out, "\n") != 1 {
			t.Errorf("%v printed %q, want one line with the Go version", args, out)
		}
		if stderr.Len() != 0 {
			t.Errorf("%v wrote to stderr: %q", args, stderr.String())
		}
	}
}

func TestVersionUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"version", "-h"}, noEnv, nil, &stdout, &stderr); err != nil {
		t.Fatalf("version -h: %v", err)
	}
	if !strings.Contains(stdout.String(), "Usage: researchbot version") {
		t.Errorf("version -h printed %q", stdout.String())
	}
	stdout.Reset()
	err := run(context.Background(), []string{"version", "extra"}, noEnv, nil, &stdout, &stderr)
	if code := exitCode(err, io.Discard); code != 2 || !strings.Contains(stderr.String(), "no arguments") || stdout.Len() != 0 {
		t.Errorf("version extra: exit %d, stdout %q, stderr %q; want exit 2 and the problem on stderr", code, stdout.String(), stderr.String())
	}
}

func TestUsageListsNewCommands(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, noEnv, nil, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"researchbot healthcheck", "researchbot version"} {
		if !strings.Contains(stdout.String(), cmd) {
			t.Errorf("usage does not mention %q", cmd)
		}
	}
}

// noEnv is an empty environment.
func noEnv(string) string { return "" }
