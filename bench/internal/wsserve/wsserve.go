// Package wsserve is the server side of the bench's WebSocket runs: the
// ws-server subcommand's flags and its conversation with the parent
// (ws-bench, ws-scale) over standard input and output. The bench binary
// serves every library through it; each binary under cmd/ws-server-*
// links one library and this package only, as a deployment would, so that
// a process's own memory is that library's and not the bench's.
package wsserve

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// IdleDeadline, when positive, is the read deadline a library that sets
// one on upgraded connections by default (nbio: 120 s) is to use instead
// (-idle-deadline), so that idle connections outlive a long reading.
// Main sets it before serving; libraries without such a deadline ignore it.
var IdleDeadline time.Duration

// Serve serves ln: it upgrades requests for /ws and echoes every message
// back with its type; it returns only on failure.
type Serve func(ln net.Listener) error

// Main is the ws-server subcommand: the server lookup names for -lib, on
// -addr. args may start with "ws-server". It prints "ready ADDR" on
// stdout once it listens and exits when its standard input ends (the
// parent closed it, or died) or after -life. Until then a "heap FILE"
// line on stdin writes a heap profile (answering "ok"), and "memstats"
// prints the runtime's memory figures as a JSON line.
func Main(args []string, libs string, lookup func(lib string) (Serve, error)) error {
	if len(args) > 0 && args[0] == "ws-server" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("ws-server", flag.ExitOnError)
	lib := fs.String("lib", "gale", "the library: "+libs)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	reuse := fs.Bool("reuseport", false, "set SO_REUSEPORT, so that several server processes share the port")
	life := fs.Duration("life", 15*time.Minute, "exit after this long whatever happens")
	prof := fs.String("cpuprofile", "", "write a CPU profile to this file")
	rate := fs.Int("memprofilerate", 0, "runtime.MemProfileRate (1: every allocation; 0: the runtime's default)")
	keepAlive := fs.Duration("keepalive", 0, "TCP keep-alive period of accepted connections (0: package net's 15 s; negative: off)")
	idle := fs.Duration("idle-deadline", 0, "read deadline of upgraded connections, for a library that sets one by default (nbio: 120 s); 0: the library's default")
	fs.Parse(args)
	IdleDeadline = *idle
	if *rate > 0 {
		runtime.MemProfileRate = *rate
	}
	stopProf, err := StartProfile(*prof)
	if err != nil {
		return err
	}
	defer stopProf()
	serve, err := lookup(*lib)
	if err != nil {
		return err
	}
	if err := LoopbackOnly(*addr); err != nil {
		return err
	}
	ln, err := Listener(*reuse, *keepAlive)("tcp", *addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- serve(ln) }()
	go commands(stopProf)
	// A server that fails to start returns at once.
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %v", *lib, err)
	case <-time.After(200 * time.Millisecond):
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "ready %s\n", ln.Addr())
	w.Flush()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %v", *lib, err)
	case <-time.After(*life):
		return nil
	}
}

// commands answers the parent's lines on stdin until it closes it, then
// stops the profile and exits.
func commands(stopProf func()) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		switch cmd {
		case "heap":
			runtime.GC()
			if f, err := os.Create(arg); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
			fmt.Println("ok")
		case "memstats":
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			b, _ := json.Marshal(map[string]any{"heap_inuse": m.HeapInuse, "heap_alloc": m.HeapAlloc, "heap_sys": m.HeapSys,
				"heap_released": m.HeapReleased, "stack_inuse": m.StackInuse, "sys": m.Sys, "goroutines": runtime.NumGoroutine(), "num_gc": m.NumGC})
			fmt.Println(string(b))
		}
	}
	stopProf()
	os.Exit(0)
}

// Listener returns a listen function, setting SO_REUSEPORT when
// reuseport, so that several server processes can share one port, and
// the accepted connections' TCP keep-alive period (0: package net's
// 15 s; negative: off).
func Listener(reuseport bool, keepAlive time.Duration) func(network, addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: keepAlive}
	if reuseport {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	return func(network, addr string) (net.Listener, error) {
		return lc.Listen(context.Background(), network, addr)
	}
}

// LoopbackOnly refuses an address outside 127.0.0.0/8.
func LoopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return fmt.Errorf("%s: only 127.0.0.0/8 addresses", addr)
	}
	return nil
}

// StartProfile starts a CPU profile into path ("" for none) and returns
// what stops it, which may be called more than once.
func StartProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		f.Close()
	}), nil
}
