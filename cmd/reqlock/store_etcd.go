package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/reqlock/reqlock/etcdstore"
)

// openEtcd builds a client on the comma-separated endpoints. https://
// endpoints use TLS with the system's roots.
func openEtcd(endpoints string, timeout time.Duration) (openedStore, error) {
	var eps []string
	secure := false
	for e := range strings.SplitSeq(endpoints, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return openedStore{}, errors.New("ETCD_ENDPOINTS has an empty endpoint")
		}
		secure = secure || strings.HasPrefix(e, "https://")
		eps = append(eps, e)
	}
	cfg := clientv3.Config{
		Endpoints:   eps,
		DialTimeout: timeout,
		// The client would log each failed dial on its own; the error the
		// command prints says it once.
		Logger: zap.NewNop(),
	}
	if secure {
		cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return openedStore{}, fmt.Errorf("ETCD_ENDPOINTS: %w", err)
	}
	return openedStore{store: etcdstore.New(c), where: "etcd at " + strings.Join(eps, ","),
		close: func() { _ = c.Close() }}, nil
}
