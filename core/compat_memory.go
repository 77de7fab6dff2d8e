package core

import "github.com/reqlock/reqlock/memorystore"

// MemoryStore keeps locks in this process: the default for examples, tests
// and single-instance services. It is memorystore.Store.
type MemoryStore = memorystore.Store

// NewMemoryStore returns an empty in-process store (memorystore.New).
func NewMemoryStore() *MemoryStore { return memorystore.New() }

// DefaultMemoryRecordBytes bounds the records a MemoryStore keeps
// (memorystore.DefaultRecordBytes).
const DefaultMemoryRecordBytes = memorystore.DefaultRecordBytes
