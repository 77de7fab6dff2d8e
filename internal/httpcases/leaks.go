package httpcases

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

// VerifyTestMain is goleak.VerifyTestMain for packages that run the cases.
// A Lock keeps retrying, in the background, a store call whose outcome it
// does not know (a release, the undoing of an acquire), each until its lease
// ends; a case that ends while the store is away leaves such a retry behind
// for up to that long. Goroutines still alive after settle are leaks; opts
// are goleak's, for a framework's goroutines that live as long as the
// process.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	goleak.VerifyTestMain(settling{m, opts}, opts...)
}

// settle is the longest lease a case's Locker uses: core's default.
const settle = 10 * time.Second

type settling struct {
	m    *testing.M
	opts []goleak.Option
}

func (s settling) Run() int {
	code := s.m.Run()
	for deadline := time.Now().Add(settle); code == 0 && goleak.Find(s.opts...) != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	return code
}
