package main

// gRPC over gale's HTTP/2 (docs/bench/grpc.md): grpc-go's server, with the
// interop test service, served three ways: its ServeHTTP as the Handler of
// gale's httpd.Server, the same Handler on net/http's server, and grpc-go's
// own transport (grpc.Server.Serve), the reference. The interop tests
// (grpc_test.go) and the grpc-bench command (grpc_bench.go) share them.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/galeio/gale/httpd"
)

// grpcServer is one way of serving grpc-go's server. start serves ln, over
// TLS with tlsConf when it is not nil and as h2c (prior knowledge) when it
// is, with a new grpc.Server made with opts; the stop it returns ends the
// serving, waiting at most grpcStopWait, and returns what went wrong.
type grpcServer struct {
	name  string
	note  string // how it is written
	start func(ln net.Listener, tlsConf *tls.Config, opts ...grpc.ServerOption) (stop func() error)
}

// grpcServers are the servers, by name, in the order of the tables.
var grpcServers = []grpcServer{
	{name: "gale", start: startGRPCGale,
		note: "grpc.Server.ServeHTTP as the Handler of httpd.Server at its defaults (loops, epoll); h2c: Protocols HTTP1 + UnencryptedHTTP2; TLS: ServeTLS, h2 by ALPN"},
	{name: "nethttp", start: startGRPCNetHTTP,
		note: "grpc.Server.ServeHTTP as the Handler of net/http's http.Server at its defaults; h2c: the same Protocols; TLS: ServeTLS, h2 by ALPN"},
	{name: "grpc", start: startGRPCNative,
		note: "grpc.Server.Serve: grpc-go's own HTTP/2 transport; TLS by grpc.Creds"},
}

// grpcStopWait bounds a server's graceful stop.
const grpcStopWait = 5 * time.Second

// findGRPCServer returns the server named name.
func findGRPCServer(name string) (grpcServer, error) {
	var names []string
	for _, s := range grpcServers {
		if s.name == name {
			return s, nil
		}
		names = append(names, s.name)
	}
	return grpcServer{}, fmt.Errorf("unknown gRPC server %q (have %s)", name, strings.Join(names, ", "))
}

// newInteropServer is grpc-go's server with the interop test service,
// made with opts.
func newInteropServer(opts ...grpc.ServerOption) *grpc.Server {
	gs := grpc.NewServer(opts...)
	testgrpc.RegisterTestServiceServer(gs, interop.NewTestServer())
	return gs
}

// h2cProtocols is what the h2c servers serve: HTTP/1 and HTTP/2 in the
// clear, as a port shared by gRPC and other HTTP would.
func h2cProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// startGRPCGale serves grpc-go's ServeHTTP on gale's httpd.Server.
func startGRPCGale(ln net.Listener, tlsConf *tls.Config, opts ...grpc.ServerOption) func() error {
	gs := newInteropServer(opts...)
	srv := &httpd.Server{Handler: gs, TLSConfig: tlsConf, Protocols: grpcProtocols(tlsConf)}
	return startHTTPServer(ln, tlsConf != nil, gs, srv)
}

// startGRPCNetHTTP serves grpc-go's ServeHTTP on net/http's server.
func startGRPCNetHTTP(ln net.Listener, tlsConf *tls.Config, opts ...grpc.ServerOption) func() error {
	gs := newInteropServer(opts...)
	srv := &http.Server{Handler: gs, TLSConfig: tlsConf, Protocols: grpcProtocols(tlsConf)}
	return startHTTPServer(ln, tlsConf != nil, gs, srv)
}

// httpServer is what httpd.Server and http.Server share.
type httpServer interface {
	Serve(net.Listener) error
	ServeTLS(l net.Listener, certFile, keyFile string) error
	Shutdown(context.Context) error
	Close() error
}

// startHTTPServer serves ln with srv, whose Handler is gs, over TLS (its
// TLSConfig) if tls. Its stop stops gs first, which ends the ServeHTTP
// calls still open, then shuts srv down.
func startHTTPServer(ln net.Listener, tls bool, gs *grpc.Server, srv httpServer) func() error {
	done := make(chan error, 1)
	go func() {
		if tls {
			done <- srv.ServeTLS(ln, "", "")
		} else {
			done <- srv.Serve(ln)
		}
	}()
	return func() error {
		gs.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), grpcStopWait)
		defer cancel()
		err := srv.Shutdown(ctx)
		if err != nil {
			srv.Close()
			err = fmt.Errorf("shutdown: %w", err)
		}
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, fmt.Errorf("serve returned %v, want %v", serr, http.ErrServerClosed))
		}
		return err
	}
}

// grpcProtocols is an HTTP server's Protocols: h2c's, or nil (the
// default: HTTP/1 and, by ALPN, HTTP/2) over TLS.
func grpcProtocols(tlsConf *tls.Config) *http.Protocols {
	if tlsConf != nil {
		return nil
	}
	return h2cProtocols()
}

// startGRPCNative serves gs with grpc-go's own transport.
func startGRPCNative(ln net.Listener, tlsConf *tls.Config, opts ...grpc.ServerOption) func() error {
	if tlsConf != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConf)))
	}
	gs := newInteropServer(opts...)
	done := make(chan error, 1)
	go func() { done <- gs.Serve(ln) }()
	return func() error {
		stopped := make(chan struct{})
		go func() { gs.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(grpcStopWait):
			gs.Stop()
		}
		// Serve returns nil after a stop.
		if err := <-done; err != nil {
			return fmt.Errorf("serve returned %v, want nil", err)
		}
		return nil
	}
}

// dialGRPC is grpc-go's client for addr: h2c (insecure credentials), or
// TLS with tlsConf when it is not nil.
func dialGRPC(addr string, tlsConf *tls.Config, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if tlsConf != nil {
		creds = credentials.NewTLS(tlsConf)
	}
	opts = append(opts, grpc.WithTransportCredentials(creds))
	return grpc.NewClient("passthrough:///"+addr, opts...)
}
