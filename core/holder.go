package core

import (
	"fmt"
)

// maxHolderLen bounds a holder label: it is stored with every lock and
// travels with every acquire, extend and release.
const maxHolderLen = 64

// WithHolder labels every lock the Locker takes, for example with the
// instance's name, so that Locker.Inspect (and the reqlock command) can say
// who holds a key. The label is stored with the lock after its token
// (token + "." + label: Lock.Token returns both); stores compare the whole
// value, as they do without a label. A Locker without it stores the bare
// token and pays nothing.
//
// The label must be 1 to 64 bytes of printable ASCII without space, '{' or
// '}': it becomes part of key names derived from the token, which must stay
// in the lock's hash tag. It panics otherwise. Anyone who can read the store
// can read the label: do not put secrets in it.
func WithHolder(label string) Option {
	if err := validHolder(label); err != nil {
		panic(fmt.Sprintf("reqlock: WithHolder: %q %v", label, err))
	}
	return func(l *Locker) { l.holder = holderSep + label }
}

func validHolder(label string) error {
	if label == "" || len(label) > maxHolderLen {
		return fmt.Errorf("must be 1 to %d bytes long", maxHolderLen)
	}
	for i := 0; i < len(label); i++ {
		if c := label[i]; c <= ' ' || c > '~' || c == '{' || c == '}' {
			return fmt.Errorf("holds %q: only printable ASCII without space, '{' or '}' is allowed", c)
		}
	}
	return nil
}

// labelled returns token as the store keeps it: with the Locker's holder
// label, if it has one.
func (l *Locker) labelled(token string) string {
	if l.holder == "" {
		return token
	}
	return token + l.holder
}
