package core

import "github.com/reqlock/reqlock/internal/redisfloor"

// The floors every Redis benchmark is read against (package redisfloor),
// under the names core's benchmarks use.
var (
	FloorSetNX         = redisfloor.SetNX
	FloorScriptedSetNX = redisfloor.ScriptedSetNX
	FloorRelease       = redisfloor.Release
)
