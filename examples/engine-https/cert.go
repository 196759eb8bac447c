package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"time"
)

// loadCertificate loads the certificate chain in certFile and its key in
// keyFile, or makes a self-signed certificate when both are empty.
func loadCertificate(certFile, keyFile string) (tls.Certificate, error) {
	switch {
	case certFile == "" && keyFile == "":
		return selfSigned(time.Now())
	case certFile == "" || keyFile == "":
		return tls.Certificate{}, errors.New("-cert and -key go together")
	}
	return tls.LoadX509KeyPair(certFile, keyFile)
}

// selfSigned makes a certificate for localhost, 127.0.0.1 and ::1 that
// signs itself, valid for a day from now: enough for trying the server
// with a client told to trust it (curl --cacert, or -k to trust anything).
func selfSigned(now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	// RFC 5280 §4.1.2.2: a positive serial number of up to 20 bytes.
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own issuer: a client may trust it as a root
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
