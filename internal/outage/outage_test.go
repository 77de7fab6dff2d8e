package outage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A closed port reads as refused; a listener that never answers as silent;
// an answer of the server is left alone.
func TestExplain(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := ln.Addr().String()
	defer ln.Close() // accepts in the kernel's backlog, answers nothing
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := gone.Addr().String()
	gone.Close()

	for _, c := range []struct {
		addr string
		err  error
		want []error
		says string
	}{
		{up, context.DeadlineExceeded, []error{context.DeadlineExceeded}, "Db at " + up + " accepts connections but did not answer"},
		{down, context.DeadlineExceeded, []error{context.DeadlineExceeded, syscall.ECONNREFUSED}, "Db at " + down + " refuses connections"},
		{down, io.ErrUnexpectedEOF, []error{io.ErrUnexpectedEOF, syscall.ECONNREFUSED}, "Db at " + down + " refuses connections"},
		{up, io.ErrUnexpectedEOF, []error{io.ErrUnexpectedEOF}, "Db at " + up + " closed the connection"},
	} {
		got := Explain("Db", c.addr, c.err)
		for _, w := range c.want {
			if !errors.Is(got, w) {
				t.Errorf("%v at %s: %v; want errors.Is %v", c.err, c.addr, got, w)
			}
		}
		if !strings.Contains(got.Error(), c.says) {
			t.Errorf("%v at %s: %q; want %q", c.err, c.addr, got, c.says)
		}
	}
	once := Explain("Db", up, context.DeadlineExceeded)
	if twice := Explain("Db", up, fmt.Errorf("cancel: %w", once)); strings.Count(twice.Error(), "Db at") != 1 {
		t.Errorf("explained twice: %v", twice)
	}
	answer := errors.New("syntax error")
	if got := Explain("Db", up, answer); got != answer {
		t.Errorf("an answer of the server became %v", got)
	}
	if got := Explain("Db", up, context.Canceled); got != context.Canceled {
		t.Errorf("a caller that gave up became %v", got)
	}
}
