// Package archtest holds the test that keeps ARCHITECTURE.md's package
// table true: it reads every package's transitive dependencies with
// `go list -deps` and checks them against rules that each give their
// reason, in the manner of tailscale's tstest/deptest. Every package of the
// module must have a row, so a new package cannot slip by unchecked.
// Where imports cannot tell (slack-go's Block Kit types and its Web API
// client are one package), the rendering leaf's source is read for the
// names a Web API call would begin with, and all product code for calls
// of package time's clock (one clock: the quartz.Clock the assembly hands
// out, outside a reasoned allow-list).
//
// It also keeps .ci/tools true: every program a Go file runs by name
// (exec.Command, exec.LookPath, a script's #! line) must be listed there,
// so that .ci/run installs it on a fresh machine and .ci/check-tools fails
// CI when it is missing; and the Dockerfile buildable: every directory
// go.mod replaces a module with (the stand-ins under internal/) is bound
// into its module download.
package archtest
