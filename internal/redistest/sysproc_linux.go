package redistest

import "syscall"

// The server dies with the test binary, even when go test kills it on a
// timeout, so no redis-server outlives a run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
