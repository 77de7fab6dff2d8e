//go:build !linux

package leadtest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
