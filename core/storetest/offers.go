package storetest

import "github.com/reqlock/reqlock/core"

// Offers names the optional interfaces of the store contract that s
// implements, in the order of the package doc: what Run will check
// beyond Store itself.
func Offers(s core.Store) []string {
	var names []string
	add := func(ok bool, name string) {
		if ok {
			names = append(names, name)
		}
	}
	_, c := s.(core.Canceler)
	add(c, "Canceler")
	_, r := s.(core.Recorder)
	add(r, "Recorder")
	_, w := s.(core.Waker)
	add(w, "Waker")
	_, g := s.(core.Granter)
	add(g, "Granter")
	_, i := s.(core.Inspector)
	add(i, "Inspector")
	_, l := s.(core.LapseTeller)
	add(l, "LapseTeller")
	_, k := s.(core.Kinder)
	add(k, "Kinder")
	return names
}
