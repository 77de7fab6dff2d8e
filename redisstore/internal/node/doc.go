// Package node runs reqlock's Lua scripts on one Redis master: the Redis
// store (package redisstore) is a Node, and the Redlock store (package
// redisstore/redlock) runs one Node per master.
//
// The scripts are the .lua files under lua/, embedded and sent as EVALSHA.
// A lock nobody else wants takes the lean scripts (acquire_lean.lua,
// release_lean.lua); they hand anything rare to the full ones (acquire.lua,
// release.lua) without changing anything. Acquires go out with go-redis's
// own resending off: the Node resends them as the client's options say and
// remembers which tokens it resent, so that only their releases leave a
// cancel marker, and a resent attempt that took nothing leaves its own
// (resend.go). docs/internals.md reads every script line by
// line.
package node
