package httpload

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// keyShape is every key reqlock may write for a prefix: the lock,
// prefix{22 base64url chars}, and what shares its hash tag: the fence
// counter, a replay record, the mark of a run in progress, the line of
// waiters and its sign, a cancel marker for a 22-char token or for a
// waiter's name ('~' + 16-char instance + '/' + 16-char wait).
func keyShape(prefix string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) +
		`\{[A-Za-z0-9_-]{22}\}(|:fence|:record|:run|:q|:qn|:cancel:([A-Za-z0-9_-]{22}|~[A-Za-z0-9_-]{16}/[A-Za-z0-9_-]{16}))$`)
}

// Keys is what a scan of a Redis found.
type Keys struct {
	Total     int
	Locks     int      // lock keys: no suffix
	Foreign   []string // keys not of the hashed form (the first few, quoted)
	NForeign  int
	NoExpiry  int           // keys without a TTL: they would stay forever
	LongestTT time.Duration // the longest TTL left
}

// ScanKeys reads every key of c with SCAN and checks each against the
// hashed form for prefix, and that it expires.
func ScanKeys(ctx context.Context, c *redis.Client, prefix string) (Keys, error) {
	shape := keyShape(prefix)
	var k Keys
	iter := c.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		k.Total++
		if !shape.MatchString(key) {
			k.NForeign++
			if len(k.Foreign) < 3 {
				k.Foreign = append(k.Foreign, strconv.Quote(clip([]byte(key))))
			}
			continue
		}
		if !strings.Contains(key, "}:") {
			k.Locks++
		}
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil {
			return k, err
		}
		switch {
		case ttl == -1:
			k.NoExpiry++
		case ttl > k.LongestTT:
			k.LongestTT = ttl
		}
	}
	return k, iter.Err()
}

// Problem says what is wrong with k, or "".
func (k Keys) Problem() string {
	var p []string
	if k.NForeign > 0 {
		p = append(p, fmt.Sprintf("%d keys not of the hashed form, e.g. %s", k.NForeign, strings.Join(k.Foreign, ", ")))
	}
	if k.NoExpiry > 0 {
		p = append(p, fmt.Sprintf("%d keys without a TTL", k.NoExpiry))
	}
	return strings.Join(p, "; ")
}

// UsedMemory is INFO memory's used_memory, in bytes.
func UsedMemory(ctx context.Context, c *redis.Client) (int64, error) {
	info, err := c.InfoMap(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	s, ok := info["Memory"]["used_memory"]
	if !ok {
		return 0, fmt.Errorf("INFO memory has no used_memory")
	}
	return strconv.ParseInt(s, 10, 64)
}
