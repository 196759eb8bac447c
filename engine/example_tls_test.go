package engine_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// tlsEcho is echo that reports each connection's TLS session.
type tlsEcho struct{ echo }

func (tlsEcho) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	st, _ := c.ConnectionState() // the handshake is over: complete
	fmt.Printf("server: %s, ALPN %q\n", tls.VersionName(st.Version), st.NegotiatedProtocol)
	return nil, engine.None
}

// An echo server over TLS, and a crypto/tls client. OnData sees the
// plaintext and Write encrypts: the handler is the plain echo's.
func ExampleEngine_ListenTLS() {
	// The tests' certificate; a program loads its own with
	// tls.LoadX509KeyPair(certFile, keyFile).
	pki := tlstest.Get()
	config := &tls.Config{
		Certificates: []tls.Certificate{pki.Server},
		NextProtos:   []string{"echo/1"},
	}
	e, err := engine.New(tlsEcho{}, engine.Options{Loops: 1})
	if err != nil {
		log.Fatal(err)
	}
	addr, err := e.ListenTLS("tcp", "127.0.0.1:0", config)
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Start(); err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown(context.Background())

	conn, err := tls.Dial("tcp", addr.String(), &tls.Config{
		RootCAs:    pki.Roots,
		ServerName: "localhost",
		NextProtos: []string{"echo/1"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("hello, TLS"))
	reply := make([]byte, len("hello, TLS"))
	if _, err := io.ReadFull(conn, reply); err != nil {
		log.Fatal(err)
	}
	fmt.Println("client:", string(reply))
	// Output:
	// server: TLS 1.3, ALPN "echo/1"
	// client: hello, TLS
}
