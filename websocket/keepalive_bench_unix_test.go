//go:build unix

package websocket_test

import (
	"bytes"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// The keepalive benchmarks; docs/bench/websocket-keepalive.md has their
// figures and commands.

// BenchmarkKeepaliveMemory reports the heap an idle connection holds,
// server and client ends together (B/pair), with the server's keepalive
// off and on (its first ping armed, not yet due): the difference is
// keepalive's cost per connection. The client's keepalive stays off.
// (The net backend runs at most 2,000 pairs: its sockets take twice the
// descriptors.)
func BenchmarkKeepaliveMemory(b *testing.B) {
	n := 5000
	if testing.Short() {
		n = 200
	}
	for _, ka := range []time.Duration{0, time.Hour} {
		b.Run("Keepalive="+map[bool]string{false: "off", true: "on"}[ka > 0], func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) {
				n := n
				if os.Getenv(poller.EnvBackend) == poller.Net.String() {
					n = min(n, 2000) // its adopted sockets are duplicated: twice the descriptors
				}
				u := &websocket.Upgrader{Options: websocket.Options{Handler: websocket.BaseHandler{}, PingInterval: ka}}
				url := serveWSLoops(b, u, false, 1)
				d := &websocket.Dialer{Options: websocket.Options{Handler: websocket.BaseHandler{}, Engine: testEngineLoops(b, 1)}}
				dial(b, d, url).CloseNow() // the client's engine up
				for b.Loop() {
					before := heap()
					conns := make([]*websocket.Conn, n)
					for i := range conns {
						conns[i] = dial(b, d, url)
					}
					for u.Stats().Open < n {
						time.Sleep(time.Millisecond) // the server's OnOpen, which arms the ping, has run
					}
					time.Sleep(10 * time.Millisecond) // and its deadline task
					b.ReportMetric(float64(heap()-before)/float64(n), "B/pair")
					b.ReportMetric(float64(n), "pairs")
					for _, c := range conns {
						c.CloseNow()
					}
					for u.Stats().Open > 0 {
						time.Sleep(time.Millisecond)
					}
				}
			})
		})
	}
}

// pongCounter counts the pings its connections answer.
type pongCounter struct {
	websocket.BaseHandler
	pings atomic.Int64
}

func (h *pongCounter) OnPing(*websocket.Conn, []byte) { h.pings.Add(1) }

// BenchmarkKeepalivePing measures the CPU one keepalive round costs, the
// process's user and system time per ping (cpu-ns/ping): the server's
// timer firing, its ping written, the client's loop reading it and
// answering, the server's loop reading the pong and re-arming the
// deadline: both ends, on loopback. Conns connections idle but for the
// pings, every PingInterval. An operation is a ping.
func BenchmarkKeepalivePing(b *testing.B) {
	const conns, interval = 1000, 100 * time.Millisecond
	backendtest.RunB(b, func(b *testing.B) {
		h := &pongCounter{}
		u := &websocket.Upgrader{Options: websocket.Options{Handler: websocket.BaseHandler{}, PingInterval: interval, PongTimeout: time.Minute}}
		url := serveWSLoops(b, u, false, 1)
		d := &websocket.Dialer{Options: websocket.Options{Handler: h, Engine: testEngineLoops(b, 1)}}
		for range conns {
			dial(b, d, url)
		}
		time.Sleep(2 * interval) // the pings are under way
		start, cpu0 := h.pings.Load(), cpuTime()
		b.ResetTimer()
		for h.pings.Load()-start < int64(b.N) {
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		pings := h.pings.Load() - start
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(pings), "cpu-ns/ping")
		if s := u.Stats(); s.Open != conns {
			b.Fatalf("server Stats().Open = %d, want %d: answered pings timed out", s.Open, conns)
		}
	})
}

// BenchmarkKeepaliveEcho is BenchmarkEcho's plain 16-byte round trip with
// keepalive off and on at both ends: the cost of the deadline each
// receive re-arms.
func BenchmarkKeepaliveEcho(b *testing.B) {
	for _, ka := range []time.Duration{0, time.Hour} {
		b.Run("Keepalive="+map[bool]string{false: "off", true: "on"}[ka > 0]+"/Size=16", func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) {
				u := &websocket.Upgrader{Options: websocket.Options{Handler: &signal{echo: true}, PingInterval: ka}}
				url := serveWS(b, u, false)
				cli := &signal{got: make(chan int, 1)}
				c := dial(b, &websocket.Dialer{Options: websocket.Options{Handler: cli, PingInterval: ka}}, url)
				defer c.CloseNow()
				msg := bytes.Repeat([]byte("gale websocket! "), 1)
				b.SetBytes(int64(2 * len(msg)))
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					c.WriteMessage(websocket.BinaryMessage, msg)
					<-cli.got
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		})
	}
}

// testEngineLoops is testEngine with the given number of loops.
func testEngineLoops(b *testing.B, loops int) *engine.Engine {
	b.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: loops})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Stop() })
	return e
}

// cpuTime returns the process's user and system CPU time, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
