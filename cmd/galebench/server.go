package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/engine"
)

// servers are the echo servers galebench can start. Each serves on ln, or
// on ln's address, and calls ready with the address it accepts on once
// connections may be dialed; it returns only on failure.
var servers = map[string]func(ln net.Listener, ready func(net.Addr)) error{
	"aio":    serveAIO,
	"engine": serveEngine,
	"stdnet": serveStd,
}

func serverNames() []string {
	var names []string
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func knownServer(name string) bool { _, ok := servers[name]; return ok }

// cpuProfile is the -cpuprofile flag: the parent passes it to gale
// servers, which write their profile there.
var cpuProfile string

// runServer is the child's side: listen on loopback, print the address on
// stdout once the server accepts there, serve until stdin closes (the
// parent exits or is done).
func runServer(name, profile string) error {
	serve, ok := servers[name]
	if !ok {
		return fmt.Errorf("unknown server %q", name)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		pprof.StopCPUProfile()
		os.Exit(0)
	}()
	return serve(ln, func(a net.Addr) { fmt.Println(a) })
}

// child is a running server process.
type child struct {
	cmd  *exec.Cmd
	addr string
	in   io.WriteCloser
}

func startServer(name string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve", name}
	if cpuProfile != "" && name != "stdnet" {
		args = append(args, "-cpuprofile", cpuProfile)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		in.Close()
		cmd.Wait()
		return nil, fmt.Errorf("server %s did not start: %w", name, err)
	}
	return &child{cmd: cmd, addr: strings.TrimSpace(line), in: in}, nil
}

// dump asks the server to print its goroutines (SIGQUIT makes the Go
// runtime do so on stderr, which the child shares) and waits for it to exit.
func (c *child) dump() {
	c.cmd.Process.Signal(syscall.SIGQUIT)
	c.cmd.Wait()
}

func (c *child) stop() error {
	c.in.Close()
	return c.cmd.Wait()
}

// serveStd is the standard library's echo: a goroutine per connection.
func serveStd(ln net.Listener, ready func(net.Addr)) error {
	ready(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// serveAIO echoes through an aio Watcher. Reads use the swap buffer, so an
// idle connection holds no memory; the bytes are copied into a pooled
// buffer for the write, because swap data is valid only until the next
// WaitIO while a write may take longer.
func serveAIO(ln net.Listener, ready func(net.Addr)) error {
	w, err := aio.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	ready(ln.Addr())
	go func() {
		var pool bufPool
		for {
			results, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, res := range results {
				switch {
				case res.Error != nil:
					if res.Operation == aio.OpWrite {
						pool.put(res.Buffer)
					}
					w.Free(res.Conn)
				case res.Operation == aio.OpRead:
					b := pool.get(res.Size)
					copy(b, res.Buffer[:res.Size])
					w.Write(nil, res.Conn, b)
				default:
					pool.put(res.Buffer)
					w.Read(nil, res.Conn, nil)
				}
			}
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		if err := w.Read(nil, c, nil); err != nil {
			return err
		}
	}
}

// engineEcho is the engine server's handler: it writes back what it gets.
// Write sends at once when nothing is queued, and copies the rest into the
// connection's queue, so the loop's read buffer is free on return.
type engineEcho struct{ engine.BaseHandler }

func (engineEcho) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	c.Write(in.Bytes())
	in.Discard(in.Len())
	return engine.None
}

// serveEngine echoes with package engine and its default Options.
//
// It closes ln and has the engine listen on the same address, rather than
// accepting on ln and handing each connection over with Engine.Adopt: a
// reactor accepts on its own loop, and that is the path to measure. Adopt
// would add a goroutine woken by the runtime poller per accept, a dup(2)
// and a close(2) per connection, and a task posted to the loop: costs a
// real engine server does not pay, which would show up in the CPU of the
// conns scenario. The parent dials only once ready has printed the
// address, so no connection can land on ln between its close and the
// engine's listen. A closed listening socket leaves no TIME_WAIT behind,
// so the port is free at once.
func serveEngine(ln net.Listener, ready func(net.Addr)) error {
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return err
	}
	e, err := engine.New(engineEcho{}, engine.Options{})
	if err != nil {
		return err
	}
	a, err := e.Listen("tcp", addr)
	if err != nil {
		e.Stop()
		return err
	}
	if err := e.Start(); err != nil {
		e.Stop()
		return err
	}
	ready(a)
	<-e.Done()
	return errors.New("engine stopped")
}

// bufPool keeps write buffers by power-of-two size class. One goroutine
// uses it, so it needs no lock.
type bufPool struct{ free [18][][]byte }

func class(n int) int {
	c := 0
	for 1<<c < n {
		c++
	}
	return c
}

func (p *bufPool) get(n int) []byte {
	c := class(n)
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c] = p.free[c][:l-1]
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

func (p *bufPool) put(b []byte) {
	c := class(cap(b))
	if 1<<c == cap(b) && c < len(p.free) {
		p.free[c] = append(p.free[c], b[:0])
	}
}
