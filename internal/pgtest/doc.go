// Package pgtest starts real PostgreSQL servers for tests: Debian's
// postgresql package, initdb'd into a temporary directory owned by the
// postgres user, listening on 127.0.0.1 on a free port with fsync off, and
// stopped when the tests are done. Tests run as root and PostgreSQL refuses
// to, so every server process runs as the postgres user.
//
// A test binary shares one server (Shared) whose tests each get a database of
// their own (NewDatabase, Pool), and starts a private one (Start) for a test
// that kills, restarts or pauses it. TestMain must be Main, which stops the
// shared server after the tests and checks for leaked goroutines.
package pgtest
