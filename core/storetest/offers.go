package storetest

import (
	"github.com/reqlock/reqlock/core"
	"github.com/reqlock/reqlock/core/store"
)

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
	_, c := s.(store.Canceler)
	add(c, "Canceler")
	_, r := s.(store.Recorder)
	add(r, "Recorder")
	_, m := s.(store.RunMarker)
	add(m, "RunMarker")
	am, ok := s.(store.AcquireMarker)
	add(ok && am.MarksOnAcquire(), "AcquireMarker")
	_, u := s.(store.UnitRecorder)
	add(u, "UnitRecorder")
	_, w := s.(store.Waker)
	add(w, "Waker")
	_, g := s.(store.Granter)
	add(g, "Granter")
	_, i := s.(store.Inspector)
	add(i, "Inspector")
	_, l := s.(store.LapseTeller)
	add(l, "LapseTeller")
	_, k := s.(store.Kinder)
	add(k, "Kinder")
	_, p := s.(store.Semaphores)
	add(p, "Semaphores")
	_, pl := s.(store.PermitLines)
	add(pl, "PermitLines")
	return names
}
