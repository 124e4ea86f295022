//go:build faults

package faults

import "syscall"

// sigterm is what a graceful stop of redis-server sends.
const sigterm = syscall.SIGTERM
