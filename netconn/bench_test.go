package netconn_test

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// BenchmarkPingPong measures a 64-byte request and response between two
// conns of the same kind: netconn (on each backend) and std net.
func BenchmarkPingPong(b *testing.B) {
	run := func(b *testing.B, c1, c2 net.Conn) {
		go func() {
			buf := make([]byte, 64)
			for {
				if _, err := io.ReadFull(c2, buf); err != nil {
					return
				}
				if _, err := c2.Write(buf); err != nil {
					return
				}
			}
		}()
		buf := make([]byte, 64)
		b.SetBytes(64)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := c1.Write(buf); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(c1, buf); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("netconn", func(b *testing.B) {
		backendRun(b, func(b *testing.B) {
			c1, c2, stop, err := pipe(b, "tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer stop()
			run(b, c1, c2)
		})
	})
	b.Run("std", func(b *testing.B) {
		c1, c2, stop := stdPipe(b)
		defer stop()
		run(b, c1, c2)
	})
}

// BenchmarkFileCopy measures io.Copy of a 64 MiB file into a conn and
// out of one into a file: sendfile and splice against the pooled buffer.
func BenchmarkFileCopy(b *testing.B) {
	dir := backendtest.TempDir(b)
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, make([]byte, 64<<20), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"syscall", "buffer"} {
		b.Run(mode, func(b *testing.B) {
			backendRun(b, func(b *testing.B) {
				b.SetBytes(64 << 20)
				for range b.N {
					copyFileOnce(b, src, filepath.Join(dir, "dst"), mode == "buffer")
				}
			})
		})
	}
}

func copyFileOnce(b *testing.B, src, dst string, hide bool) {
	c1, c2, stop, err := pipe(b, "tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	done := make(chan error, 1)
	go func() {
		f, err := os.Open(src)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		var r io.Reader = f
		if hide {
			r = struct{ io.Reader }{f}
		}
		_, err = io.Copy(c1, r)
		c1.(interface{ CloseWrite() error }).CloseWrite()
		done <- err
	}()
	f, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var w io.Writer = f
	var r io.Reader = c2
	if hide {
		w, r = struct{ io.Writer }{f}, struct{ io.Reader }{c2}
	}
	if _, err := io.Copy(w, r); err != nil {
		b.Fatal(err)
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// backendRun is backendtest.Run for benchmarks.
func backendRun(b *testing.B, f func(b *testing.B)) {
	for _, k := range backendtest.Kinds() {
		b.Run(k.String(), func(b *testing.B) {
			b.Setenv("GALE_BACKEND", k.String())
			f(b)
		})
	}
}

// stdPipe connects two std net TCP conns.
func stdPipe(tb testing.TB) (c1, c2 net.Conn, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	ch := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		ch <- c
	}()
	c1, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	c2 = <-ch
	return c1, c2, func() { c1.Close(); c2.Close() }
}
