// Package depstest holds no code: its test keeps gale's layers pointing
// down, in the manner of go/build's deps_test.go in the Go tree.
//
// The test runs `go list -deps -json ./...` from the module root for each
// target operating system and checks every package of the module against
// a written policy (the table in deps_test.go):
//
//   - each package's imports from inside the module are among those its
//     row of the table allows: internal/sock below internal/uring below
//     internal/poller below internal/loop below aio and engine, and
//     netconn, httpd (and http1, its former name) and websocket above engine;
//   - internal/sock imports nothing outside the standard library but
//     golang.org/x/sys/unix, and the core (everything but bench/, cmd/ and
//     examples/) depends, directly or not, on no module other than the
//     standard library and golang.org/x/sys, save the protocol layers
//     (httpd, websocket), which may also use golang.org/x/net and x/text;
//   - only programs (bench/, cmd/, examples/) and the layers the table
//     names import the public APIs aio, engine, netconn and httpd;
//   - a package missing from the table fails the test, with a message
//     asking to add it, so that every new package states its place.
//
// Test files are exempt: tests may import any package.
//
// The test needs the go command (it is skipped without one) and the
// standard library only.
package depstest
