package httpd_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// Behind a load balancer that sends the PROXY protocol (HAProxy's
// send-proxy or send-proxy-v2, an AWS NLB, nginx's proxy_protocol), the
// server reads each connection's header on its loop and the handler sees
// the client's address. Here the "balancer" is the example itself,
// writing a version 1 header by hand on loopback, which it trusts.
func ExampleServer_proxyProtocol() {
	srv := &httpd.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, "client:", r.RemoteAddr)
		}),
		ProxyProtocol: &engine.ProxyProtocol{
			Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, // the balancers
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)

	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		log.Fatal(err)
	}
	io.WriteString(nc, "PROXY TCP4 203.0.113.9 192.0.2.1 51000 443\r\n"+
		"GET / HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		log.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	nc.Close()
	fmt.Print(string(body))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	// Output:
	// client: 203.0.113.9:51000
}
