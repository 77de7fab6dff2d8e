package backoff_test

import (
	"fmt"
	"time"

	"github.com/reqlock/reqlock/backoff"
)

// A policy is created once and shared; each wait draws from its own BackOff.
func ExampleLimit() {
	p := backoff.Limit(backoff.Exponential(10*time.Millisecond, time.Second), 2)

	b := p()
	for d := b.NextBackOff(); d != backoff.Stop; d = b.NextBackOff() {
		fmt.Println(d >= 5*time.Millisecond && d <= time.Second)
	}
	fmt.Println("gave up")
	// Output:
	// true
	// true
	// gave up
}
