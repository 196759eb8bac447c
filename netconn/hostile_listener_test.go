package netconn_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// deadliner is the listener's deadline setter, reached as net/http and
// others reach *net.TCPListener's.
type deadliner interface{ SetDeadline(time.Time) error }

// eachListener runs f per backend and stream network with a fresh
// netconn listener, closed when f's test ends.
func eachListener(t *testing.T, f func(t *testing.T, ln net.Listener)) {
	backendtest.Run(t, func(t *testing.T) {
		for _, network := range streamNetworks {
			t.Run(network, func(t *testing.T) {
				backendtest.NeedNetwork(t, network)
				addr := "127.0.0.1:0"
				if network == "unix" {
					addr = filepath.Join(backendtest.TempDir(t), "s")
				}
				ln, err := netconn.Listen(network, addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ln.Close() })
				f(t, ln)
			})
		}
	})
}

// acceptResult is the outcome of an Accept run in the background.
type acceptResult struct {
	c   net.Conn
	err error
}

func goAccept(ln net.Listener) <-chan acceptResult {
	ch := make(chan acceptResult, 1)
	go func() {
		c, err := ln.Accept()
		ch <- acceptResult{c, err}
	}()
	return ch
}

// awaitAccept returns the Accept's outcome, failing t after limit; a conn
// it returns is closed when t ends.
func awaitAccept(t *testing.T, ch <-chan acceptResult, limit time.Duration) acceptResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.c != nil {
			t.Cleanup(func() { r.c.Close() })
		}
		return r
	case <-time.After(limit):
		t.Fatalf("Accept did not return within %v", limit)
		return acceptResult{}
	}
}

// dialStd connects to ln with package net; the conn is closed when t ends.
func dialStd(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial(ln.Addr().Network(), ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestListenerAcceptAfterClose(t *testing.T) {
	eachListener(t, func(t *testing.T, ln net.Listener) {
		if err := ln.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if c, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close = %v, %v; want net.ErrClosed", c, err)
		}
		if err := ln.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second Close = %v, want net.ErrClosed", err)
		}
		if err := ln.(deadliner).SetDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("SetDeadline after Close = %v, want net.ErrClosed", err)
		}
	})
}

func TestListenerCloseUnblocksAccept(t *testing.T) {
	eachListener(t, func(t *testing.T, ln net.Listener) {
		ch := goAccept(ln)
		time.Sleep(settle)
		if err := ln.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if r := awaitAccept(t, ch, hang); !errors.Is(r.err, net.ErrClosed) {
			t.Errorf("Accept under Close = %v, %v; want net.ErrClosed", r.c, r.err)
		}
	})
}

// TestListenerCloseKeepsConns: connections already accepted outlive
// their listener.
func TestListenerCloseKeepsConns(t *testing.T) {
	eachListener(t, func(t *testing.T, ln net.Listener) {
		std := dialStd(t, ln)
		r := awaitAccept(t, goAccept(ln), hang)
		if r.err != nil {
			t.Fatal(r.err)
		}
		ln.Close()
		std.Write([]byte("still here"))
		buf := make([]byte, 16)
		r.c.SetReadDeadline(time.Now().Add(hang))
		n, err := r.c.Read(buf)
		if string(buf[:n]) != "still here" || err != nil {
			t.Errorf("Read after the listener closed = %q, %v; want %q", buf[:n], err, "still here")
		}
	})
}

func wantAcceptTimeout(t *testing.T, what string, r acceptResult) {
	t.Helper()
	if !isTimeout(r.err) {
		t.Errorf("%s = %v, %v; want an error matching os.ErrDeadlineExceeded with Timeout() true", what, r.c, r.err)
	}
}

// TestListenerDeadline: Accept fails with a timeout after the listener's
// deadline, whether set before Accept or changed while it waits; the
// listener stays usable.
func TestListenerDeadline(t *testing.T) {
	t.Run("past", func(t *testing.T) {
		eachListener(t, func(t *testing.T, ln net.Listener) {
			dialStd(t, ln) // even with a connection waiting
			ln.(deadliner).SetDeadline(time.Now().Add(-time.Second))
			wantAcceptTimeout(t, "Accept after the deadline", awaitAccept(t, goAccept(ln), hang))
			// Cleared, the waiting connection is accepted.
			ln.(deadliner).SetDeadline(time.Time{})
			if r := awaitAccept(t, goAccept(ln), hang); r.err != nil {
				t.Errorf("Accept after clearing the deadline = %v", r.err)
			}
		})
	})
	t.Run("expires", func(t *testing.T) {
		eachListener(t, func(t *testing.T, ln net.Listener) {
			ln.(deadliner).SetDeadline(time.Now().Add(settle))
			wantAcceptTimeout(t, "Accept past its deadline", awaitAccept(t, goAccept(ln), hang))
		})
	})
	t.Run("shorten", func(t *testing.T) {
		eachListener(t, func(t *testing.T, ln net.Listener) {
			ln.(deadliner).SetDeadline(time.Now().Add(time.Hour))
			ch := goAccept(ln)
			time.Sleep(settle)
			ln.(deadliner).SetDeadline(time.Now().Add(settle))
			wantAcceptTimeout(t, "Accept with a shortened deadline", awaitAccept(t, ch, hang))
		})
	})
	for _, tc := range laterCases {
		t.Run(tc.name, func(t *testing.T) {
			eachListener(t, func(t *testing.T, ln net.Listener) {
				for try := 1; ; try++ {
					first := time.Now().Add(firstDeadline)
					ln.(deadliner).SetDeadline(first)
					ch := goAccept(ln)
					time.Sleep(settle)
					ln.(deadliner).SetDeadline(tc.to())
					if !time.Now().Before(first) {
						ln.(deadliner).SetDeadline(time.Now().Add(-time.Second))
						awaitAccept(t, ch, hang)
						tooLate(t, try)
						continue
					}
					select {
					case r := <-ch:
						if r.c != nil {
							r.c.Close()
						}
						t.Fatalf("Accept returned past its first deadline: %v, %v", r.c, r.err)
					case <-time.After(400 * time.Millisecond):
					}
					dialStd(t, ln)
					if r := awaitAccept(t, ch, hang); r.err != nil {
						t.Errorf("Accept = %v, want a conn", r.err)
					}
					return
				}
			})
		})
	}
	t.Run("again", func(t *testing.T) {
		eachListener(t, func(t *testing.T, ln net.Listener) {
			for range 3 {
				ln.(deadliner).SetDeadline(time.Now().Add(20 * time.Millisecond))
				wantAcceptTimeout(t, "Accept", awaitAccept(t, goAccept(ln), hang))
			}
			ln.(deadliner).SetDeadline(time.Time{})
			dialStd(t, ln)
			if r := awaitAccept(t, goAccept(ln), hang); r.err != nil {
				t.Errorf("Accept after timeouts = %v, want a conn", r.err)
			}
		})
	})
}

// TestListenerAddr: Addr reports the port the kernel chose (or the
// socket's path), and the accepted conn's addresses match the dialer's.
func TestListenerAddr(t *testing.T) {
	eachListener(t, func(t *testing.T, ln net.Listener) {
		switch a := ln.Addr().(type) {
		case *net.TCPAddr:
			if a.Port == 0 || !a.IP.IsLoopback() {
				t.Errorf("Addr() = %v, want 127.0.0.1 and the port chosen", a)
			}
		case *net.UnixAddr:
			if a.Name == "" || a.Net != "unix" {
				t.Errorf("Addr() = %#v, want the socket's path", a)
			}
		default:
			t.Fatalf("Addr() is %T", a)
		}
		std := dialStd(t, ln)
		r := awaitAccept(t, goAccept(ln), hang)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got, want := r.c.LocalAddr().String(), ln.Addr().String(); got != want {
			t.Errorf("accepted LocalAddr() = %s, want the listener's %s", got, want)
		}
		if got, want := r.c.RemoteAddr().String(), std.LocalAddr().String(); got != want {
			t.Errorf("accepted RemoteAddr() = %s, want the dialer's LocalAddr %s", got, want)
		}
	})
}

// TestUnixListenerRemovesFile: Close removes a Unix listener's socket
// file, as package net's does.
func TestUnixListenerRemovesFile(t *testing.T) {
	backendtest.NeedNetwork(t, "unix")
	backendtest.Run(t, func(t *testing.T) {
		path := filepath.Join(backendtest.TempDir(t), "s")
		ln, err := netconn.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			ln.Close()
			t.Fatalf("socket file while listening: %v", err)
		}
		ln.Close()
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket file after Close: Stat = %v, want os.ErrNotExist", err)
		}
		// The path is free for a new listener.
		ln, err = netconn.Listen("unix", path)
		if err != nil {
			t.Fatalf("Listen again on the path = %v", err)
		}
		ln.Close()
	})
}

// TestListenerConcurrentAccept: Accepts from several goroutines share the
// connections, none lost or given twice; Close then ends every Accept
// still waiting, parked in the loop or queued behind the one that is.
func TestListenerConcurrentAccept(t *testing.T) {
	eachListener(t, func(t *testing.T, ln net.Listener) {
		const acceptors, dials = 4, 100
		got := make(chan acceptResult, dials+acceptors)
		for range acceptors {
			go func() {
				for {
					c, err := ln.Accept()
					got <- acceptResult{c, err}
					if err != nil {
						return
					}
				}
			}()
		}
		seen := map[string]bool{}
		for range dials {
			c := dialStd(t, ln)
			seen[c.LocalAddr().String()] = false
		}
		for i := range dials {
			select {
			case r := <-got:
				if r.err != nil {
					t.Fatalf("Accept %d = %v", i, r.err)
				}
				r.c.Close()
				from := r.c.RemoteAddr().String()
				if network := ln.Addr().Network(); network == "tcp" {
					if done, ok := seen[from]; !ok || done {
						t.Errorf("accepted %s: not dialed, or twice", from)
					}
					seen[from] = true
				}
			case <-time.After(hang):
				t.Fatalf("%d of %d connections accepted", i, dials)
			}
		}
		time.Sleep(settle) // the acceptors park again
		ln.Close()
		for i := range acceptors {
			select {
			case r := <-got:
				if !errors.Is(r.err, net.ErrClosed) {
					t.Errorf("acceptor %d after Close: %v, %v; want net.ErrClosed", i, r.c, r.err)
				}
			case <-time.After(hang):
				t.Fatalf("%d of %d acceptors returned after Close", i, acceptors)
			}
		}
	})
}
