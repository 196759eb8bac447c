package benchrun

import (
	"crypto/tls"
	"net"

	"github.com/galeio/gale/backend"
)

// TLSServers are gale's TLS echo server and std net's over crypto/tls,
// the reference every TLS ratio is taken against. Both use crypto/tls
// with the same certificate and its default settings.
func TLSServers() []Server {
	return []Server{
		{Name: "engine-tls", ServeTLS: serveEngineTLS, Gale: true, Backend: "epoll",
			Note: "the engine server with TLS: Engine.ListenTLS (crypto/tls; handshakes on the engine's pool, records decrypted on the loop), default Options; OnData writes the plaintext back, Conn.Write encrypts"},
		{Name: "std-tls", ServeTLS: serveStdTLS,
			Note: "stdnet's echo over crypto/tls: tls.NewListener, a goroutine per connection, 64 KiB buffer, Read then Write back"},
	}
}

// serveStdTLS is stdnet's echo on a crypto/tls listener: each
// connection's handshake runs on its goroutine, at its first Read.
func serveStdTLS(ln net.Listener, kp KeyPair, ready func(net.Addr)) error {
	config, err := kp.Config()
	if err != nil {
		return err
	}
	ready(ln.Addr())
	return EchoEach(tls.NewListener(ln, config))
}

// serveEngineTLS is the engine server with Engine.ListenTLS.
func serveEngineTLS(ln net.Listener, kp KeyPair, ready func(net.Addr)) error {
	config, err := kp.Config()
	if err != nil {
		return err
	}
	return serveEngineOn(backend.Epoll, ln, config, ready)
}
