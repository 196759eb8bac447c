// Package tlstest makes the certificates gale's TLS tests use: a
// throw-away certificate authority, a server certificate for 127.0.0.1,
// ::1 and "localhost", and a client certificate, all ECDSA P-256 (RSA
// too, for cipher suites that need it). For tests only.
package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// PKI is a certificate authority with a server and a client certificate
// it signed.
type PKI struct {
	Roots      *x509.CertPool
	CA         *x509.Certificate
	CAPEM      []byte
	Server     tls.Certificate // ECDSA P-256
	ServerRSA  tls.Certificate // RSA 2048, for TLS 1.2 ECDHE-RSA suites
	Client     tls.Certificate // client authentication
	caKey      crypto.Signer
	serverPEMs [2][]byte // certificate, key
	rsaPEMs    [2][]byte
	clientPEMs [2][]byte
}

var (
	once   sync.Once
	shared *PKI
)

// Get returns the PKI, made once per process.
func Get() *PKI {
	once.Do(func() { shared = newPKI() })
	return shared
}

func newPKI() *PKI {
	p := &PKI{}
	caKey := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gale test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der := must(x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey))
	p.CA = must(x509.ParseCertificate(der))
	p.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	p.caKey = caKey
	p.Roots = x509.NewCertPool()
	p.Roots.AddCert(p.CA)
	p.Server, p.serverPEMs = p.leaf(2, "localhost", must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)), x509.ExtKeyUsageServerAuth)
	p.ServerRSA, p.rsaPEMs = p.leaf(3, "localhost", must(rsa.GenerateKey(rand.Reader, 2048)), x509.ExtKeyUsageServerAuth)
	p.Client, p.clientPEMs = p.leaf(4, "gale test client", must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)), x509.ExtKeyUsageClientAuth)
	return p
}

func (p *PKI) leaf(serial int64, cn string, key crypto.Signer, usage x509.ExtKeyUsage) (tls.Certificate, [2][]byte) {
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	}
	der := must(x509.CreateCertificate(rand.Reader, tmpl, p.CA, key.Public(), p.caKey))
	keyDER := must(x509.MarshalPKCS8PrivateKey(key))
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return must(tls.X509KeyPair(certPEM, keyPEM)), [2][]byte{certPEM, keyPEM}
}

// ServerConfig returns a server configuration with both server
// certificates (crypto/tls picks by the suites the client offers).
func (p *PKI) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.Server, p.ServerRSA}}
}

// ClientConfig returns a client configuration trusting the CA.
func (p *PKI) ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: p.Roots, ServerName: "localhost"}
}

// Files writes the CA, the server's certificate and key (ECDSA and RSA)
// and the client's into dir, for openssl and curl, and returns their
// paths.
func (p *PKI) Files(dir string) (Files, error) {
	f := Files{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server.key"),
		RSACert:    filepath.Join(dir, "server-rsa.pem"),
		RSAKey:     filepath.Join(dir, "server-rsa.key"),
		ClientCert: filepath.Join(dir, "client.pem"),
		ClientKey:  filepath.Join(dir, "client.key"),
	}
	for path, b := range map[string][]byte{
		f.CA: p.CAPEM, f.ServerCert: p.serverPEMs[0], f.ServerKey: p.serverPEMs[1],
		f.RSACert: p.rsaPEMs[0], f.RSAKey: p.rsaPEMs[1],
		f.ClientCert: p.clientPEMs[0], f.ClientKey: p.clientPEMs[1],
	} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return Files{}, err
		}
	}
	return f, nil
}

// Files names the PEM files Files wrote.
type Files struct {
	CA, ServerCert, ServerKey, RSACert, RSAKey, ClientCert, ClientKey string
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
