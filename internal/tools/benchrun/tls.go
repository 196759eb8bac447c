package benchrun

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/galeio/gale/internal/testkit/tlstest"
)

// KeyPair is a TLS server's certificate and private key, PEM-encoded:
// tlstest's ECDSA P-256 server certificate, signed by the authority the
// clients trust, for 127.0.0.1 and localhost.
type KeyPair struct{ CertPEM, KeyPEM []byte }

// Config returns a crypto/tls server configuration with kp's certificate
// alone and every other setting at its default.
func (kp KeyPair) Config() (*tls.Config, error) {
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, nil
}

// keyFiles are the paths of a KeyPair's two PEM files.
type keyFiles struct{ cert, key string }

// writeKeyFiles writes tlstest's certificates into a new temporary
// directory, for the server children to read, and returns the server's
// files and the directory, which the caller removes.
func writeKeyFiles() (keyFiles, string, error) {
	dir, err := os.MkdirTemp("", "galebench-tls-")
	if err != nil {
		return keyFiles{}, "", err
	}
	f, err := tlstest.Get().Files(dir)
	if err != nil {
		os.RemoveAll(dir)
		return keyFiles{}, "", err
	}
	return keyFiles{f.ServerCert, f.ServerKey}, dir, nil
}

// read reads the key pair, in a server child.
func (f keyFiles) read() (KeyPair, error) {
	cert, err := os.ReadFile(f.cert)
	if err != nil {
		return KeyPair{}, err
	}
	key, err := os.ReadFile(f.key)
	return KeyPair{CertPEM: cert, KeyPEM: key}, err
}

// clientConfig is the TLS clients' configuration: tlstest's, which
// trusts the servers' authority, with crypto/tls's defaults otherwise
// (TLS 1.3 and its key exchanges) and no session cache, so that every
// handshake is a full one. It is shared, and never changed once made.
var clientConfig = sync.OnceValue(func() *tls.Config {
	c := tlstest.Get().ClientConfig()
	c.ClientSessionCache = nil
	return c
})

// dialFunc connects to a server at addr; a TLS one also handshakes.
type dialFunc func(addr string) (net.Conn, error)

// dialerFor returns how the clients of case c connect.
func dialerFor(c Case) dialFunc {
	if c.TLS() {
		return dialTLS
	}
	return dialTCP
}

func dialTCP(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }

// dialTLS connects and completes a TLS handshake, within 10 s.
func dialTLS(addr string) (net.Conn, error) {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: clientConfig()}
	return d.Dial("tcp", addr)
}

// probeTLS opens one TLS connection to addr and describes what the
// handshake chose: "TLS 1.3, X25519MLKEM768, TLS_AES_128_GCM_SHA256".
func probeTLS(addr string) (string, error) {
	c, err := dialTLS(addr)
	if err != nil {
		return "", fmt.Errorf("TLS probe: %w", err)
	}
	defer c.Close()
	st := c.(*tls.Conn).ConnectionState()
	return fmt.Sprintf("%s, %s, %s", tls.VersionName(st.Version), st.CurveID, tls.CipherSuiteName(st.CipherSuite)), nil
}
