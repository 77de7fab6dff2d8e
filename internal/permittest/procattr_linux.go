package permittest

import "syscall"

// A child dies with the test binary, even when go test kills it on a
// timeout.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
