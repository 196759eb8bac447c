package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/grpclog"

	"github.com/galeio/gale/internal/testkit/tlstest"
)

// grpcTransport is how a test reaches a server: h2c, or TLS with h2 by
// ALPN.
type grpcTransport struct {
	name   string
	server func() *tls.Config // nil for h2c
	client func() *tls.Config
}

var (
	grpcH2C = grpcTransport{name: "h2c", server: func() *tls.Config { return nil }, client: func() *tls.Config { return nil }}
	grpcTLS = grpcTransport{name: "tls", server: func() *tls.Config { return tlstest.Get().ServerConfig() },
		client: func() *tls.Config { return tlstest.Get().ClientConfig() }}
	grpcTransports = []grpcTransport{grpcH2C, grpcTLS}
)

// startGRPC starts s on a loopback port as tr says, with opts, and returns
// a client connection to it; both are closed when the test ends.
func startGRPC(t testing.TB, s grpcServer, tr grpcTransport, opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := s.start(ln, tr.server(), opts...)
	cc, err := dialGRPC(ln.Addr().String(), tr.client())
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		if err := stop(); err != nil {
			t.Errorf("%s server: %v", s.name, err)
		}
	})
	return cc
}

// grpcFatal is what a Fatal log of grpc-go's panics with: the interop
// cases report a failure with grpclog's Fatal, which would otherwise
// exit the test binary (os.Exit(1)) with no test named.
type grpcFatal struct{ msg string }

// grpcTestLogger is grpclog's default logger (errors to stderr), but for
// Fatal, which panics with a grpcFatal, for grpcCheck to recover.
type grpcTestLogger struct{ grpclog.LoggerV2 }

func (l grpcTestLogger) Fatal(args ...any) { panic(grpcFatal{fmt.Sprint(args...)}) }
func (l grpcTestLogger) Fatalf(format string, args ...any) {
	panic(grpcFatal{fmt.Sprintf(format, args...)})
}
func (l grpcTestLogger) Fatalln(args ...any) { panic(grpcFatal{fmt.Sprintln(args...)}) }

// init sets grpcTestLogger, before any use of grpc-go, as SetLoggerV2
// requires.
func init() {
	grpclog.SetLoggerV2(grpcTestLogger{grpclog.NewLoggerV2(io.Discard, io.Discard, os.Stderr)})
}

// grpcCheck runs f, an interop case, and fails the test with the message
// of a Fatal log f makes.
func grpcCheck(t testing.TB, f func()) {
	t.Helper()
	defer func() {
		switch v := recover().(type) {
		case nil:
		case grpcFatal:
			t.Fatal(v.msg)
		default:
			panic(v)
		}
	}()
	f()
}
