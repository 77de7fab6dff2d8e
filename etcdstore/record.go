package etcdstore

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/reqlock/reqlock/core/store"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Records and cancel markers must outlive what wrote them by a set time
// (the retention, the marker's life) and then go. Each lives on a lease
// that nobody keeps alive: a lease of the time plus a tenth of it (at
// least a second) serves every key written in that tenth, so a key lives
// at least its time and at most a tenth longer, and one grant serves many
// writes.
type expiringPools struct {
	s     *Store
	mu    sync.Mutex
	byLen map[int64]pooled
}

type pooled struct {
	id          clientv3.LeaseID
	reuseBefore time.Time
}

func (p *expiringPools) init(s *Store) {
	p.s = s
	p.byLen = make(map[int64]pooled)
}

// get returns a lease under which a key written now lives at least d.
func (p *expiringPools) get(ctx context.Context, d time.Duration) (clientv3.LeaseID, error) {
	secs := seconds(d)
	now := time.Now()
	p.mu.Lock()
	if l, ok := p.byLen[secs]; ok && now.Before(l.reuseBefore) {
		p.mu.Unlock()
		return l.id, nil
	}
	p.mu.Unlock()
	slack := max(secs/10, 1)
	r, err := p.s.c.Grant(reqCtx(ctx), secs+slack)
	if err != nil {
		return 0, p.s.failure("grant lease", err)
	}
	p.mu.Lock()
	p.byLen[secs] = pooled{id: r.ID, reuseBefore: now.Add(time.Duration(slack) * time.Second)}
	p.mu.Unlock()
	return r.ID, nil
}

// drop forgets id, which etcd no longer has.
func (p *expiringPools) drop(id clientv3.LeaseID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, l := range p.byLen {
		if l.id == id {
			delete(p.byLen, k)
		}
	}
}

// withPooled runs op with a pooled lease of d, once more with a new one if
// etcd no longer has it.
func (s *Store) withPooled(ctx context.Context, d time.Duration, op func(clientv3.LeaseID) error) error {
	for retried := false; ; retried = true {
		id, err := s.pools.get(ctx, d)
		if err != nil {
			return err
		}
		err = op(id)
		if !retried && errors.Is(err, rpctypes.ErrLeaseNotFound) {
			s.pools.drop(id)
			continue
		}
		return err
	}
}

// ReleaseRecording implements store.Recorder: one transaction, if the token
// still holds the key, writes the record, deletes the lock, and drops the
// line: every waiter's watch fires, and each finds the record.
//
// The record says when its retention ends, by the writer's clock; a
// reader past that takes it for gone (and deletes it). Its lease, a
// second or a tenth longer, removes it from etcd if nobody reads it.
// Retention is about replay, not exclusion: a clock that is off makes a
// record live a little longer or shorter, and never lets two hold a lock.
func (s *Store) ReleaseRecording(ctx context.Context, key, token string, record []byte, retention time.Duration) error {
	ctx, done := s.call(ctx)
	defer done()
	var ok bool
	err := s.withPooled(ctx, retention, func(id clientv3.LeaseID) error {
		cmp, k := s.holds(key, token)
		ops := []clientv3.Op{
			clientv3.OpPut(recordKey(key), encodeRecord(record, time.Now().Add(retention)), clientv3.WithLease(id)),
			clientv3.OpDelete(linePrefix(key), clientv3.WithPrefix()),
			clientv3.OpDelete(runKey(key)), // the run recorded: nothing in doubt
		}
		if k == key {
			// Held by its value, not by heading the line (whose key the
			// line's deletion covers).
			ops = append(ops, clientv3.OpDelete(key))
		}
		r, err := s.c.Txn(reqCtx(ctx)).If(cmp).Then(ops...).Commit()
		if err == nil {
			ok = r.Succeeded
		}
		return err
	})
	if err != nil {
		return s.failure("release recording", err)
	}
	s.held.forget(token)
	if !ok {
		return store.ErrNotHeld
	}
	return nil
}

// RecordsDurable implements store.Durability: etcd writes every change to
// its log on a majority of members before it answers, and keeps leases
// across restarts.
func (s *Store) RecordsDurable(context.Context) (bool, string, error) {
	return true, "etcd commits every write to a majority of members' logs; records live on leases that survive restarts", nil
}

// encodeRecord is the record's value in etcd: when its retention ends, in
// Unix milliseconds, eight bytes big-endian, then the record.
func encodeRecord(record []byte, until time.Time) string {
	b := make([]byte, 8, 8+len(record))
	binary.BigEndian.PutUint64(b, uint64(until.UnixMilli()))
	return string(append(b, record...))
}

// decodeRecord reads a value of encodeRecord: the record (never nil, even
// when empty: nil says there is none), and whether it is still kept at now.
func decodeRecord(v []byte, now time.Time) ([]byte, bool) {
	if len(v) < 8 {
		return []byte{}, false
	}
	until := time.UnixMilli(int64(binary.BigEndian.Uint64(v[:8])))
	return append([]byte{}, v[8:]...), now.Before(until)
}
