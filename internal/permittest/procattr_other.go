//go:build !linux

package permittest

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
