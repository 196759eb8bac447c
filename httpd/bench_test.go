package httpd_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/galeio/gale/httpd"
)

var helloBody = []byte("Hello, World!")

func helloHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(helloBody)
	})
}

// roundTrips sends n keep-alive GETs on c one after the other, reading
// each response whole, without allocating.
func roundTrips(tb testing.TB, c net.Conn, n int) {
	req := []byte("GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: gale-bench\r\n\r\n")
	buf := make([]byte, 4096)
	for i := 0; i < n; i++ {
		if _, err := c.Write(req); err != nil {
			tb.Fatal(err)
		}
		got := 0
		for {
			k, err := c.Read(buf[got:])
			if err != nil {
				tb.Fatal(err)
			}
			got += k
			if bytes.HasSuffix(buf[:got], helloBody) {
				break
			}
		}
	}
}

// stdServe serves h with net/http on loopback for comparison.
func stdServe(tb testing.TB, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func benchHello(b *testing.B, addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	roundTrips(b, c, 10)
	b.ReportAllocs()
	b.ResetTimer()
	roundTrips(b, c, b.N)
}

// BenchmarkHello is one connection's keep-alive round trips: latency
// bound, and its allocs/op are the server's per request (the client
// allocates nothing).
func BenchmarkHello(b *testing.B) {
	b.Run("gale", func(b *testing.B) { benchHello(b, start(b, &httpd.Server{}, helloHandler())) })
	b.Run("nethttp", func(b *testing.B) { benchHello(b, stdServe(b, helloHandler())) })
}

var _ = io.EOF
