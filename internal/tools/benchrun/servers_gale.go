package benchrun

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/netconn"
)

// GaleServers are gale's echo servers and std net's, the reference every
// ratio is taken against.
func GaleServers() []Server {
	return []Server{
		{Name: "aio", Serve: serveAIO(backend.Auto), Gale: true, Backend: "auto",
			Note: "gale aio Watcher, default Config (Auto: epoll on Linux); nil-buffer reads from the swap buffer, copied to a pooled buffer for the write"},
		{Name: "engine", Serve: serveEngine(backend.Auto), Gale: true, Backend: "auto",
			Note: "gale engine, default Options (Auto: io_uring where the kernel allows it, else epoll); OnData writes the input back"},
		{Name: "aio-epoll", Serve: serveAIO(backend.Epoll), Gale: true, Backend: "epoll",
			Note: "the aio server on epoll"},
		{Name: "engine-epoll", Serve: serveEngine(backend.Epoll), Gale: true, Backend: "epoll",
			Note: "the engine server on epoll: a reply made in OnData is written at once (direct write, else queued copy)"},
		{Name: "aio-io_uring", Serve: serveAIO(backend.IOURing), Gale: true, Backend: "io_uring",
			Note: "the aio server on io_uring (an unbound ring: the loop is not locked to a thread): a nil-buffer read tries read(2) into the swap buffer at once, else waits on a one-shot receive from a provided-buffer ring, copied into the swap buffer; writes are sends"},
		{Name: "engine-io_uring", Serve: serveEngine(backend.IOURing), Gale: true, Backend: "io_uring",
			Note: "the engine server on io_uring: multishot accept and receive, OnData reads the ring's buffer in place"},
		{Name: "aio-net", Serve: serveAIO(backend.Net), Gale: true, Backend: "net",
			Note: "the aio server on the net backend, the portable fallback: a goroutine per operation in flight doing package net's blocking call"},
		{Name: "engine-net", Serve: serveEngine(backend.Net), Gale: true, Backend: "net",
			Note: "the engine server on the net backend, the portable fallback"},
		{Name: "engine-iocp", Serve: serveEngine(backend.IOCP), Gale: true, Backend: "iocp",
			Note: "the engine server on IOCP (Windows: run with -wine under Wine): AcceptEx, zero-byte WSARecv then a non-blocking recv into the loop's buffer, WSASend"},
		{Name: "engine-pool", Serve: serveEnginePool, Gale: true, Backend: "auto",
			Note: "the engine server with its callbacks on an engine.Pool (default PoolOptions; Auto: epoll, as for any engine whose callbacks run off the loop): the loop copies the input into the connection's queue, a worker runs OnData and writes the echo"},
		{Name: "stdnet", Serve: serveStd,
			Note: "package net, a goroutine per connection, 64 KiB buffer"},
		{Name: "netconn", Serve: serveNetconn(backend.Epoll), Gale: true, Backend: "epoll",
			Note: "stdnet's code on a gale netconn listener on epoll: a goroutine per connection blocked in Read, woken by the loop's receive"},
		{Name: "netconn-io_uring", Serve: serveNetconn(backend.IOURing), Gale: true, Backend: "io_uring",
			Note: "stdnet's code on a gale netconn listener on io_uring"},
	}
}

// serveStd is the standard library's echo: a goroutine per connection.
func serveStd(ln net.Listener, ready func(net.Addr)) error {
	ready(ln.Addr())
	return EchoEach(ln)
}

// serveNetconn is serveStd's code on a netconn listener of backend b. As
// serveEngineOn does, it closes ln and listens on the same address.
func serveNetconn(b backend.Kind) func(net.Listener, func(net.Addr)) error {
	return func(ln net.Listener, ready func(net.Addr)) error {
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			return err
		}
		lc := netconn.ListenConfig{Backend: b}
		nl, err := lc.Listen(context.Background(), "tcp", addr)
		if err != nil {
			return err
		}
		defer nl.Close()
		ready(nl.Addr())
		return EchoEach(nl)
	}
}

// EchoEach serves every connection of ln with a goroutine that writes
// back what it reads, through a 64 KiB buffer: stdnet's server, which bench's rio server runs
// on rio's listener.
func EchoEach(ln net.Listener) error {
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
func serveAIO(b backend.Kind) func(net.Listener, func(net.Addr)) error {
	return func(ln net.Listener, ready func(net.Addr)) error { return serveAIOOn(b, ln, ready) }
}

func serveAIOOn(b backend.Kind, ln net.Listener, ready func(net.Addr)) error {
	w, err := aio.NewWatcherConfig(aio.Config{Backend: b})
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
func serveEngine(b backend.Kind) func(net.Listener, func(net.Addr)) error {
	return func(ln net.Listener, ready func(net.Addr)) error { return serveEngineOn(b, ln, nil, ready) }
}

// serveEnginePool is serveEngine's server with Options.Pool.
func serveEnginePool(ln net.Listener, ready func(net.Addr)) error {
	p := engine.NewPool(engine.PoolOptions{})
	defer p.Close()
	return serveEngineWith(engine.Options{Pool: p}, ln, nil, ready)
}

// serveEngineOn runs the engine server on backend b, on ln's address;
// with TLS (Engine.ListenTLS) if config is not nil.
func serveEngineOn(b backend.Kind, ln net.Listener, config *tls.Config, ready func(net.Addr)) error {
	return serveEngineWith(engine.Options{Backend: b}, ln, config, ready)
}

// serveEngineWith runs the engine server with o, as serveEngineOn.
func serveEngineWith(o engine.Options, ln net.Listener, config *tls.Config, ready func(net.Addr)) error {
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return err
	}
	e, err := engine.New(engineEcho{}, o)
	if err != nil {
		return err
	}
	var a net.Addr
	if config != nil {
		a, err = e.ListenTLS("tcp", addr, config)
	} else {
		a, err = e.Listen("tcp", addr)
	}
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
