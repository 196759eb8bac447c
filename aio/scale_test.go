package aio_test

import (
	"bytes"
	"fmt"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// stScaleLimit bounds each scale test.
const stScaleLimit = 60 * time.Second

// stEchoServer accepts on a loopback listener and echoes every connection
// through w with nil-buffer reads: the data is copied out of the swap
// buffer into the write. A connection is freed at end of file.
type stEchoServer struct {
	w    *aio.Watcher
	ln   net.Listener
	errs stErrs
}

func stStartEcho(t *testing.T, w *aio.Watcher) *stEchoServer {
	s := &stEchoServer{w: w}
	s.ln = stServe(t, w, &s.errs, func(c net.Conn) error { return w.Read(nil, c, nil) }, s.serve)
	return s
}

func (s *stEchoServer) serve(r aio.OpResult) error {
	switch {
	case r.Operation == aio.OpRead && r.Error == nil:
		if !r.IsSwapBuffer {
			s.errs.add(fmt.Errorf("nil-buffer read: IsSwapBuffer false"))
		}
		return s.w.Write(nil, r.Conn, append([]byte(nil), r.Buffer[:r.Size]...))
	case r.Operation == aio.OpRead && r.Error == io.EOF:
		return s.w.Free(r.Conn)
	case r.Operation == aio.OpWrite && r.Error == nil:
		return s.w.Read(nil, r.Conn, nil)
	default:
		s.errs.add(fmt.Errorf("%v: %v", r.Operation, r.Error))
		return s.w.Free(r.Conn)
	}
}

// stParallel runs f(0..n-1) on the given number of goroutines and returns
// the first error.
func stParallel(workers, n int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n)) // stop the others
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// 8,192 connections open at once against one watcher, each echoing 1 KiB
// of its own content through the swap buffer.
func TestScaleEcho8192(t *testing.T) { backendtest.Run(t, testScaleEcho8192) }

func testScaleEcho8192(t *testing.T) {
	backendtest.SkipOnNet(t, "package net's duplicate makes 3 descriptors per connection here: 8,192 of them pass the 20,000 open-file cap")
	const n, size = 8192, 1024
	begin := time.Now()
	deadline := begin.Add(stScaleLimit)
	w := stWatcher(t, aio.Config{})
	srv := stStartEcho(t, w)
	msg := func(i int) []byte { return stPattern(uint64(i)+1<<32, size) }

	clients := make([]net.Conn, n)
	t.Cleanup(func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	})
	d := net.Dialer{Deadline: deadline}
	addr := srv.ln.Addr().String()
	if err := stParallel(32, n, func(i int) error {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("dial #%d after %v: %w", i, time.Since(begin), err)
		}
		c.SetDeadline(deadline)
		clients[i] = c
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	dialed := time.Since(begin)
	stWaitFor(t, nil, "server holding 8192 connections", func() bool {
		if time.Now().After(deadline) {
			t.Fatalf("server holds %d connections after %v, want %d", w.Stats().Total().Conns, stScaleLimit, n)
		}
		return w.Stats().Total().Conns == n
	})

	if err := stParallel(64, n, func(i int) error {
		if _, err := clients[i].Write(msg(i)); err != nil {
			return fmt.Errorf("client %d: Write = %w (after %v)", i, err, time.Since(begin))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := stParallel(64, n, func(i int) error {
		got := make([]byte, size)
		if _, err := io.ReadFull(clients[i], got); err != nil {
			return fmt.Errorf("client %d: ReadFull = %w (after %v)", i, err, time.Since(begin))
		}
		if !bytes.Equal(got, msg(i)) {
			return fmt.Errorf("client %d: echo differs from what it sent", i)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	echoed := time.Since(begin)

	for i, c := range clients {
		c.Close()
		clients[i] = nil
	}
	stWaitFor(t, nil, "server releasing every connection", func() bool {
		if time.Now().After(deadline) {
			t.Fatalf("server holds %d connections after %v, want 0", w.Stats().Total().Conns, stScaleLimit)
		}
		return w.Stats().Total().Conns == 0
	})
	srv.errs.check(t, "echo server")
	if s := w.Stats().Total(); s.BytesRead != n*size || s.BytesWritten != n*size {
		t.Errorf("server moved %d bytes in, %d out, want %d each", s.BytesRead, s.BytesWritten, n*size)
	}
	t.Logf("dialed in %v, echoed by %v, released by %v (race: %v)", dialed, echoed, time.Since(begin), stRace)
}

// One connection streams through an echo that reads into and writes from
// a 64 KiB caller buffer; the client checks every byte it gets back.
func TestScaleStreamEcho64K(t *testing.T) { backendtest.Run(t, testScaleStreamEcho64K) }

func testScaleStreamEcho64K(t *testing.T) {
	total := 64 << 20
	if stRace {
		total = 16 << 20
	}
	const chunk = 64 << 10
	begin := time.Now()
	w := stWatcher(t, aio.Config{})
	sc, cc := stTCPPair(t)
	cc.SetDeadline(begin.Add(stScaleLimit))

	var errs stErrs
	served := make(chan struct{})
	go func() {
		defer close(served)
		buf := make([]byte, chunk)
		if err := w.Read(nil, sc, buf); err != nil {
			errs.add(err)
			return
		}
		for {
			res, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, r := range res {
				switch {
				case r.Operation == aio.OpRead && r.Error == nil:
					err = w.Write(nil, sc, buf[:r.Size])
				case r.Operation == aio.OpRead && r.Error == io.EOF:
					err = w.Free(sc)
				case r.Operation == aio.OpWrite && r.Error == nil && r.Size == len(r.Buffer):
					err = w.Read(nil, sc, buf)
				default:
					err = fmt.Errorf("%v = %d, %v", r.Operation, r.Size, r.Error)
				}
				if err != nil {
					errs.add(err)
					w.Free(sc)
				}
			}
		}
	}()
	t.Cleanup(func() { w.Close(); <-served })

	written := make(chan error, 1)
	go func() {
		g := stGen{s: 42}
		b := make([]byte, chunk)
		for sent := 0; sent < total; sent += chunk {
			g.fill(b)
			if _, err := cc.Write(b); err != nil {
				written <- err
				return
			}
		}
		written <- cc.(*net.TCPConn).CloseWrite()
	}()

	g := stGen{s: 42}
	got, want := make([]byte, chunk), make([]byte, chunk)
	n := 0
	for n < total {
		m, err := cc.Read(got)
		g.fill(want[:m])
		if !bytes.Equal(got[:m], want[:m]) {
			t.Fatalf("echo differs from the stream in [%d, %d)", n, n+m)
		}
		n += m
		if err != nil {
			t.Fatalf("client Read after %d of %d bytes = %v, want nil (after %v)", n, total, err, time.Since(begin))
		}
	}
	// The server frees the conn when it reads our end of file.
	cc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if m, err := cc.Read(got); m != 0 || err != io.EOF {
		t.Errorf("client Read after the stream = %d, %v, want 0, EOF (the server did not see our FIN: %d reads pending)",
			m, err, w.Stats().Total().PendingReads)
	}
	if err := <-written; err != nil {
		t.Errorf("client Write = %v, want nil", err)
	}
	errs.check(t, "echo server")
	t.Logf("%d MiB echoed in %v (race: %v)", total>>20, time.Since(begin), stRace)
}
