// Package frameworks defines the HTTP frameworks the end-to-end cases of
// package httpcases and the safety load run on: net/http, chi, Gin, Echo v4
// and Echo v5. Each
// serves routes behind its own reqlock middleware, with a stand-in for the
// auth, timeout and recovery middleware an app puts in front of it.
//
// The definitions live here, outside the adapters' tests, so that a store
// in a module of its own (pgstore, etcdstore) runs the same cases on the
// same frameworks:
//
//	func TestEndToEnd(t *testing.T) {
//		for _, fw := range frameworks.All {
//			t.Run(fw.Name, func(t *testing.T) { httpcases.RunOn(t, fw, myStore) })
//		}
//	}
package frameworks

import (
	"github.com/reqlock/reqlock/httplock"
	"github.com/reqlock/reqlock/internal/httpcases"
)

// All is every framework, net/http first.
var All = []httpcases.Framework{NetHTTP, Chi, Gin, Echo, Echo5}

// lockConfig is the route's httplock.Config with its key taken by keys.
func lockConfig(rt httpcases.Route, keys httpcases.Extractors) httplock.Config {
	cfg := rt.Lock
	cfg.Key = keys.Key(rt.Key)
	return cfg
}
