// Package faultproxy is a loopback TCP proxy that injects network faults, so
// tests can put it between a real client (go-redis, pgx, etcd's) and a real
// server and have both sides see the same faults a real network would cause.
// It is how a store's tests give core/storetest its Slow hook: the harness
// holds the next command on its way to the server and lets it land after the
// caller gave up. It speaks no protocol: it moves bytes, so it serves any
// store that talks TCP, in this repository or another.
//
// Each direction of each connection can be delayed, held, dropped or cut,
// for every connection at once (Proxy) or for one (Conn). The property the
// hardening and safety tests rely on: bytes the proxy has accepted from one
// side are delivered to the other even after the first side has closed. So a
// test can hold one command (HoldNext), let the client time out and close its
// connection, run other commands over new connections, and only then let the
// held command reach Redis — a late write, landing after its sender gave up.
//
// The proxy listens on 127.0.0.1 only. Every goroutine it starts ends when it
// is closed (Start closes it at test cleanup), so goleak stays quiet.
package faultproxy
