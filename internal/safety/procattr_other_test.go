//go:build !linux

package safety

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
