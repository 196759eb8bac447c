package engine_test

import (
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestServeListener checks that listeners made elsewhere are served on
// the loops: a TCP one, one rebuilt from a descriptor (as one inherited
// or activated by systemd is), and a Unix one; the listener given is
// closed, the socket served.
func TestServeListener(t *testing.T) { backendtest.Run(t, testServeListener) }

func testServeListener(t *testing.T) {
	e := etStart(t, etEchoHandler(), engine.Options{Loops: 2})
	serve := func(t *testing.T, ln net.Listener) net.Addr {
		t.Helper()
		a, err := e.ServeListener(ln, engine.ListenConfig{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ln.Accept(); err == nil {
			t.Error("the listener given still accepts, want it closed")
		}
		return a
	}
	t.Run("tcp", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		etEchoes(t, etDial(t, serve(t, ln)), "a listener made by package net")
	})
	t.Run("file", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("package net has no File for a Windows listener")
		}
		orig, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := orig.(*net.TCPListener).File()
		orig.Close()
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		etEchoes(t, etDial(t, serve(t, ln)), "a listener rebuilt from its descriptor")
	})
	t.Run("unix", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no Unix sockets served on Windows")
		}
		ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
		if err != nil {
			t.Fatal(err)
		}
		etEchoes(t, etDial(t, serve(t, ln)), "a Unix listener")
	})
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if _, err := e.ServeListener(ln, engine.ListenConfig{Backlog: 10}); err == nil {
			t.Error("ServeListener took socket options, want them refused")
		}
		if _, err := e.ServeListener(struct{ net.Listener }{ln}, engine.ListenConfig{}); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("ServeListener of a listener with no descriptor: %v, want ErrUnsupported", err)
		}
	})
}

// TestListenWithOptions checks that ListenWith sets the socket options
// asked for before the bind (Control sees them set), that ReusePort lets
// a second listener share the port, and that the connections are served.
func TestListenWithOptions(t *testing.T) { backendtest.Run(t, testListenWithOptions) }

func testListenWithOptions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SO_REUSEPORT")
	}
	e := etStart(t, etEchoHandler(), engine.Options{Loops: 1})
	got := map[string]int{}
	lc := engine.ListenConfig{
		Backlog:    64,
		ReusePort:  true,
		RecvBuffer: 256 << 10,
		SendBuffer: 256 << 10,
		Control: func(network, address string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { readOpts(int(fd), got) })
		},
	}
	setPlatformOpts(&lc)
	a, err := e.ListenWith("tcp", "127.0.0.1:0", lc)
	if err != nil {
		t.Fatal(err)
	}
	checkPlatformOpts(t, got)
	if got["rcvbuf"] < 256<<10 || got["reuseport"] == 0 {
		t.Errorf("options seen by Control: %v", got)
	}
	if _, err := e.ListenWith("tcp", a.String(), engine.ListenConfig{ReusePort: true}); err != nil {
		t.Errorf("a second listener with ReusePort on %v: %v", a, err)
	}
	etEchoes(t, etDial(t, a), "a listener with options")
	if _, err := e.ListenWith("udp", "127.0.0.1:0", engine.ListenConfig{Proxy: &engine.ProxyProtocol{}}); err == nil {
		t.Error("a UDP listener took a PROXY header, want it refused")
	}
}
