package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are set at build time by the Dockerfile and the
// Makefile: go build -ldflags "-X main.version=v1.2.3 -X main.commit=abc123".
// Without them the module version and the VCS stamp that the go command
// records in the binary are used.
var (
	version string
	commit  string
)

// cmdVersion prints one line: version, commit and the Go toolchain.
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	if err := noArgs("version", args, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine(version, commit, buildInfo()))
	return nil
}

// buildInfo is the build information the go command recorded, or nil.
func buildInfo() *debug.BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return bi
}

// versionLine describes the build, e.g.
// "researchbot v1.2.3 (commit 0123abcd4567, 2025-01-02T03:04:05Z; go1.26.8 linux/amd64)".
// The link-time version and commit win over the build info (nil when the
// binary carries none).
func versionLine(version, commit string, bi *debug.BuildInfo) string {
	goVersion := runtime.Version()
	var revision, revTime string
	var modified bool
	if bi != nil {
		goVersion = bi.GoVersion
		if version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				revTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	version = cmp.Or(version, "devel")
	commit = cmp.Or(commit, revision)
	var details []string
	if commit != "" {
		c := "commit " + shortCommit(commit)
		if commit == revision {
			if revTime != "" {
				c += ", " + revTime
			}
			if modified {
				c += ", with uncommitted changes"
			}
		}
		details = append(details, c)
	}
	details = append(details, goVersion+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return "researchbot " + version + " (" + strings.Join(details, "; ") + ")"
}

// shortCommit shortens a full hexadecimal commit id to 12 characters.
func shortCommit(c string) string {
	if len(c) > 12 && strings.Trim(c, "0123456789abcdef") == "" {
		return c[:12]
	}
	return c
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}
