package redistest

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// clockShim is a small LD_PRELOAD library (C, built with gcc when a test
// asks for a Clock) that gives one redis-server a clock of its own.
//
//go:embed testdata/clockshim.c
var clockShim []byte

// ErrNoCompiler is why NewClock fails on a machine without gcc.
var ErrNoCompiler = errors.New("redistest: gcc not found in PATH; install it with `apt-get install -y gcc` " +
	"(./test.sh does this for you)")

// Clock is the clock of the redis-servers started with its Env: it runs at
// Rate times real time from the moment each server starts, and its wall
// clock (what Redis expires keys by, and what TIME reports) can be jumped
// ahead or back while they run. The monotonic clocks do not jump, as with a
// step of a real system clock.
type Clock struct {
	Rate float64

	lib, file string
	mu        sync.Mutex
	jump      time.Duration
}

// NewClock builds the shim into a temporary directory of t's and returns
// a clock at rate that has not jumped. It fails with ErrNoCompiler when gcc
// is missing.
func NewClock(t testing.TB, rate float64) (*Clock, error) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		return nil, ErrNoCompiler
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "clockshim.c")
	c := &Clock{Rate: rate, lib: filepath.Join(dir, "clockshim.so"), file: filepath.Join(dir, "jump")}
	if err := os.WriteFile(src, clockShim, 0o644); err != nil {
		return nil, err
	}
	// The shim maps the file's first 8 bytes: they must exist before any
	// server starts.
	if err := os.WriteFile(c.file, make([]byte, 8), 0o644); err != nil {
		return nil, err
	}
	out, err := exec.Command("gcc", "-shared", "-fPIC", "-O2", "-o", c.lib, src).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("redistest: building the clock shim: %v: %s", err, out)
	}
	return c, nil
}

// Env is what StartEnv needs to run a server on c.
func (c *Clock) Env() []string {
	return []string{
		"LD_PRELOAD=" + c.lib,
		"REQLOCK_CLOCK_RATE=" + strconv.FormatFloat(c.Rate, 'f', -1, 64),
		"REQLOCK_CLOCK_FILE=" + c.file,
	}
}

// Jump moves the wall clock of every server on c by d (back when d is
// negative), at once.
func (c *Clock) Jump(d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, err := os.OpenFile(c.file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// Rewritten in place: truncating a file the servers have mapped would
	// make them fault.
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], uint64((c.jump + d).Milliseconds()))
	if _, err := f.WriteAt(b[:], 0); err != nil {
		return err
	}
	c.jump += d
	return nil
}
