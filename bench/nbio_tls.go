package main

import (
	"net"
	"os"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/lesismal/llib/std/crypto/tls"
	"github.com/lesismal/nbio"
	ntls "github.com/lesismal/nbio/extension/tls"
	"github.com/lesismal/nbio/logging"
)

var nbioTLSServer = benchrun.Server{Name: "nbio-tls", ServeTLS: serveNbioTLS,
	Note: "nbio v1.6.12 with TLS as nbio's README links it (nbio_examples tls/server): extension/tls's WrapOpen, WrapData and WrapClose over llib v1.2.4's non-blocking fork of crypto/tls (Go 1.16's: X25519, no ML-KEM); default engine options as in the example (so no MaxWriteBufferSize: the nbio server's 6 MiB closes a tls-stream connection whose client falls behind); the data handler writes the plaintext back with tls.Conn.Write, reading through a new 2 KiB buffer per event as WrapData does by default"}

// serveNbioTLS is the nbio server with TLS, wired as nbio's TLS example
// does: the same certificate and key, parsed by llib's fork of
// crypto/tls, a server tls.Conn per connection made by WrapOpen, and
// OnData handing the records to it (WrapData), which handshakes and
// decrypts on the poller's goroutine. See serveNbio for the log and the
// listener.
//
// The engine has the example's default options. The nbio server's
// MaxWriteBufferSize of 6 MiB (from the README's Quick Start) is left
// out: nbio goes on reading while its writes wait and closes a
// connection whose pending writes pass that size, which tls-stream's
// client, slower to read 2 KiB records than to write, made happen.
func serveNbioTLS(ln net.Listener, kp benchrun.KeyPair, ready func(net.Addr)) error {
	logging.Output = os.Stderr
	logging.SetLevel(logging.LevelWarn)
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		return err
	}
	config := &tls.Config{Certificates: []tls.Certificate{cert}}
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	engine := nbio.NewEngine(nbio.Config{
		Network: "tcp",
		Addrs:   []string{addr.String()},
	})
	engine.OnOpen(ntls.WrapOpen(config, false, nil))
	engine.OnClose(ntls.WrapClose(nil))
	engine.OnData(ntls.WrapData(func(c *nbio.Conn, tc *ntls.Conn, data []byte) {
		tc.Write(data)
	}))
	if err := engine.Start(); err != nil {
		return err
	}
	ready(addr)
	select {}
}
