package httpd_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// A program serves an http.ServeMux with httpd.Server as it would with
// net/http's: only the type of the server changes. Shutdown stops it
// gracefully on SIGINT or SIGTERM.
func ExampleServer_ListenAndServe() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Hello, %s!\n", r.PathValue("name"))
	})
	srv := &httpd.Server{
		Addr:              ":8080",
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != httpd.ErrServerClosed {
		log.Fatal(err)
	}
}

// Serve serves a listener the caller made; here a loopback port, which
// the example then asks for a page with net/http's client.
func ExampleServer_Serve() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Hello, %s!\n", r.PathValue("name"))
	})
	srv := &httpd.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/hello/gale")
	if err != nil {
		log.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %s", resp.Status, body)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx) // closes the idle connection, and Serve returns
	fmt.Println(<-done)
	// Output:
	// 200 OK: Hello, gale!
	// http: Server closed
}

// ServeTLS takes the certificate and key as PEM files. A client offering
// HTTP/2 by ALPN, as net/http's does, is given HTTP/2: its streams are
// served on the loops, each request's handler on a goroutine of its own.
func ExampleServer_ServeTLS() {
	// The test PKI's files stand in for a real certificate and key;
	// tlstest.Get().ClientConfig() trusts its CA.
	dir, err := os.MkdirTemp("", "httpd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	files, err := tlstest.Get().Files(dir)
	if err != nil {
		log.Fatal(err)
	}

	srv := &httpd.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s over TLS, ALPN %q\n", r.Proto, r.TLS.NegotiatedProtocol)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.ServeTLS(ln, files.ServerCert, files.ServerKey)

	tr := &http.Transport{TLSClientConfig: tlstest.Get().ClientConfig(), ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("https://" + ln.Addr().String() + "/")
	if err != nil {
		log.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s", resp.Proto, body)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	// Output:
	// HTTP/2.0 HTTP/2.0 over TLS, ALPN "h2"
}

// In ModeMixed the first connections (fewer than MixedThreshold open)
// are served by net/http's own server, a goroutine each, and the rest by
// the loops; handlers cannot tell the difference. Here the threshold is
// 2, and three clients keep a connection each.
func ExampleMode() {
	srv := &httpd.Server{
		Mode:           httpd.ModeMixed,
		MixedThreshold: 2,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello, %s", r.URL.Query().Get("client"))
		}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)

	for i := range 3 {
		tr := &http.Transport{} // a connection of its own, kept open
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("http://%s/?client=%d", ln.Addr(), i))
		if err != nil {
			log.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(body))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	// Output:
	// hello, 0
	// hello, 1
	// hello, 2
}

// Protocols turns on HTTP/2 in the clear (h2c), as with net/http's
// server: a client with prior knowledge, such as net/http's client with
// UnencryptedHTTP2, or one that asks with "Upgrade: h2c", speaks HTTP/2
// without TLS. Here a gRPC server could be the handler: grpc-go's
// ServeHTTP is an http.Handler.
func ExampleServer_unencryptedHTTP2() {
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &httpd.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s, stream of its own\n", r.Proto)
		}),
		Protocols: &protos,
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: 100},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)

	var clientProtos http.Protocols
	clientProtos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &clientProtos}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		log.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s", resp.Proto, body)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	// Output:
	// HTTP/2.0 HTTP/2.0, stream of its own
}
