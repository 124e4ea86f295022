// Package archtest holds the test that keeps ARCHITECTURE.md's package
// table true: it reads every package's transitive dependencies with
// `go list -deps` and checks them against rules that each give their
// reason, in the manner of tailscale's tstest/deptest. Every package of the
// module must have a row, so a new package cannot slip by unchecked.
package archtest
