// Engine-https serves HTTPS on package engine: ListenTLS handshakes with
// each client (ALPN http/1.1), and the handler answers every GET or HEAD
// request with a fixed "Hello, TLS!" over keep-alive connections,
// pipelined requests included. It refuses requests with a body (501) and
// malformed ones (400). The certificate comes from -cert and -key (PEM
// files); without them the server makes a self-signed one for localhost,
// 127.0.0.1 and ::1. Try it with
//
//	go run ./examples/engine-https -addr 127.0.0.1:8443
//	curl -k --http1.1 https://127.0.0.1:8443/
//
// or, with a certificate a CA signed,
//
//	go run ./examples/engine-https -cert server.pem -key server.key
//	curl --cacert ca.pem https://localhost:8443/
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8443", "address to listen on")
	certFile := flag.String("cert", "", "certificate chain, PEM (default: a self-signed certificate)")
	keyFile := flag.String("key", "", "the certificate's private key, PEM")
	loops := flag.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	flag.Parse()

	config, err := tlsConfig(*certFile, *keyFile)
	if err != nil {
		log.Fatal(err)
	}
	if *certFile == "" {
		log.Println("no -cert: serving a self-signed certificate (curl -k)")
	}
	e, a, err := serve(*addr, config, engine.Options{Loops: *loops})
	if err != nil {
		log.Fatal(err)
	}
	log.Println("https server listening on", a)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case <-e.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Shutdown(sctx)
}

// tlsConfig returns the server's TLS configuration: the certificate in
// certFile and keyFile, or a self-signed one if both are empty; HTTP/1.1
// by ALPN; TLS 1.2 at least.
func tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	cert, err := loadCertificate(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// serve starts an engine serving HTTPS on addr (TCP) with config and
// returns it with the address it listens on. The caller stops it with
// Shutdown or Stop.
func serve(addr string, config *tls.Config, opts engine.Options) (*engine.Engine, net.Addr, error) {
	e, err := engine.New(&server{}, opts)
	if err != nil {
		return nil, nil, err
	}
	a, err := e.ListenTLS("tcp", addr, config)
	if err == nil {
		err = e.Start()
	}
	if err != nil {
		e.Stop()
		return nil, nil, err
	}
	return e, a, nil
}
