// Package faultproxy is a loopback TCP proxy that injects network faults, so
// tests can put it between a real client (go-redis) and a real server
// (redis-server from internal/redistest) and have both sides see the same
// faults a real network would cause.
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
