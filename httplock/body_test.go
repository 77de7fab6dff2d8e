package httplock_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/memorystore"
)

// signalReader is a body of unknown length that says when it is first read
// and then fails with err, if any, once its bytes are out.
type signalReader struct {
	r    io.Reader
	err  error
	once sync.Once
	read chan struct{}
}

func (s *signalReader) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.read) })
	n, err := s.r.Read(p)
	if err == io.EOF && s.err != nil {
		err = s.err
	}
	return n, err
}

// A body read ahead of a wait reaches the handler whole: shorter than the
// limit, longer (the rest streamed after), or cut by an error.
func TestWaitReadsBodyAhead(t *testing.T) {
	errCut := errors.New("connection cut")
	for _, c := range []struct {
		name string
		size int
		err  error
	}{
		{"within limit", 10, nil},
		{"at limit", 16, nil},
		{"over limit", 100, nil},
		{"error within limit", 5, errCut},
		{"error over limit", 100, errCut},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := core.NewLocker(memorystore.New())
			e, err := httplock.NewEngine(httplock.Config{Locker: l, Mode: httplock.Wait, WaitBodyLimit: 16})
			if err != nil {
				t.Fatal(err)
			}
			holder, err := l.TryObtain(context.Background(), httplock.LockKey("s", "k"))
			if err != nil {
				t.Fatal(err)
			}
			want := bytes.Repeat([]byte("b"), c.size)
			body := &signalReader{r: bytes.NewReader(want), err: c.err, read: make(chan struct{})}
			r := httptest.NewRequest("POST", "/", body)
			go func() {
				<-body.read // the waiter reads ahead before it waits
				_ = holder.Release(context.Background())
			}()
			var got []byte
			var gotErr error
			rej := e.ServeRequest(r, "s", "k", nil, func(context.Context) { got, gotErr = io.ReadAll(r.Body) })
			if rej != nil {
				t.Fatalf("rejected: %v", rej)
			}
			if !bytes.Equal(got, want) || !errors.Is(gotErr, c.err) || (gotErr == nil) != (c.err == nil) {
				t.Fatalf("handler read %d bytes, %v; want %d, %v", len(got), gotErr, len(want), c.err)
			}
		})
	}
}
