package main

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

// wsServer is one library's WebSocket echo server: serve serves ln,
// upgrading requests for /ws, and echoes every message back with its type;
// it returns only on failure. Compression is off in all of them (every
// library's default).
type wsServer struct {
	name    string
	version string
	note    string // how it is written
	// serve serves ln.
	serve func(ln net.Listener) error
	// extra leaves the server out of ws-bench's default -libs: gale's
	// own variants (docs/bench/gorilla.md), beside the libraries
	// docs/bench/ws compares.
	extra bool
}

// wsListenFunc opens a TCP listener, with SO_REUSEPORT when asked.
type wsListenFunc func(network, addr string) (net.Listener, error)

// wsServers are the servers, by -lib name, in the order of the tables.
var wsServers = []wsServer{wsGale, wsGorilla, wsGws, wsNbio, wsCoder, wsGaleGorilla, wsGaleGorillaHTTPD}

func findWsServer(name string) (wsServer, error) {
	for _, s := range wsServers {
		if s.name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range wsServers {
		names = append(names, s.name)
	}
	return wsServer{}, fmt.Errorf("unknown -lib %q (have %s)", name, strings.Join(names, ", "))
}

// wsListener returns a listen function, setting SO_REUSEPORT when
// reuseport, so that several server processes can share one port, and
// the accepted connections' TCP keep-alive period (0: package net's
// 15 s; negative: off).
func wsListener(reuseport bool, keepAlive time.Duration) wsListenFunc {
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

// wsServerMain is the ws-server subcommand: one library's echo server on
// -addr. It prints "ready ADDR" on stdout once it listens, and exits when
// its standard input ends (the parent closed it, or died) or after -life.
func wsServerMain(args []string) error {
	fs := flag.NewFlagSet("ws-server", flag.ExitOnError)
	lib := fs.String("lib", "gale", "the library: "+strings.Join(wsNames(), ", "))
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	reuse := fs.Bool("reuseport", false, "set SO_REUSEPORT, so that several server processes share the port")
	life := fs.Duration("life", 15*time.Minute, "exit after this long whatever happens")
	prof := fs.String("cpuprofile", "", "write a CPU profile to this file")
	rate := fs.Int("memprofilerate", 0, "runtime.MemProfileRate (1: every allocation; 0: the runtime's default)")
	keepAlive := fs.Duration("keepalive", 0, "TCP keep-alive period of accepted connections (0: package net's 15 s; negative: off)")
	fs.Parse(args)
	if *rate > 0 {
		runtime.MemProfileRate = *rate
	}
	stopProf, err := wsStartProfile(*prof)
	if err != nil {
		return err
	}
	defer stopProf()
	s, err := findWsServer(*lib)
	if err != nil {
		return err
	}
	if err := loopbackOnly(*addr); err != nil {
		return err
	}
	listen := wsListener(*reuse, *keepAlive)
	ln, err := listen("tcp", *addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.serve(ln) }()
	go func() {
		// Until the parent closes it: "heap FILE" writes a heap profile,
		// "memstats" prints the runtime's memory figures as a JSON line.
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
	}()
	// A server that fails to start returns at once.
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %v", s.name, err)
	case <-time.After(200 * time.Millisecond):
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "ready %s\n", ln.Addr())
	w.Flush()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: %v", s.name, err)
	case <-time.After(*life):
		return nil
	}
}

func wsNames() []string {
	var names []string
	for _, s := range wsServers {
		names = append(names, s.name)
	}
	return names
}

// wsDefaultNames are the servers ws-bench runs unless -libs names others.
func wsDefaultNames() []string {
	var names []string
	for _, s := range wsServers {
		if !s.extra {
			names = append(names, s.name)
		}
	}
	return names
}

// loopbackOnly refuses an address outside 127.0.0.0/8.
func loopbackOnly(addr string) error {
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

// wsStartProfile starts a CPU profile into path ("" for none) and returns
// what stops it, which may be called more than once.
func wsStartProfile(path string) (func(), error) {
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
