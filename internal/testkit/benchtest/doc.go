// Package benchtest is the standard-library side of gale's echo
// benchmarks: the std net client that drives every server, and the
// goroutine-per-connection std net echo server that gale's servers are
// compared with. The aio and engine benchmarks share it so that their
// figures come from the same client and the same baseline; only the gale
// server under test differs.
//
// It is for tests and benchmarks only, and imports only the standard
// library (testing included), so no package of the module may depend on
// it outside its _test.go files.
//
// # Entry points
//
// A benchmark starts a server (its own, or StartStdEcho / ListenStdEcho),
// then drives it with one of the clients:
//
//   - Stream: one connection, a writer goroutine and a reader, b.N
//     messages; measures throughput.
//   - PingPong: nconns closed loops of write then read; one op is one
//     round trip.
//   - Rounds: nconns connections dialed before the timer, released
//     together once per op; measures many mostly idle connections.
//
// For example:
//
//	func BenchmarkEcho(b *testing.B) {
//		addr, stop := benchtest.ListenStdEcho(b, 4<<10)
//		defer stop()
//		benchtest.PingPong(b, addr, 50, 4)
//	}
//
// Every client calls SetBytes and ReportAllocs itself and checks a few
// bytes of every echo (Fill, Stamp, Check), so a server that mixes up
// connections or messages fails the benchmark instead of looking fast.
//
// # Concurrency
//
// The clients and the stop functions are called from the benchmark
// goroutine; they start and wait for their own goroutines, and return
// only when none is left running.
//
// # Errors and limits
//
// Every client connection has a deadline of Timeout, so a broken server
// fails the benchmark instead of hanging it. Failures are reported with
// b.Fatal from the benchmark goroutine. Client and server share the
// process, so allocs/op and B/op count both sides.
package benchtest
