// Package tlsrec lets an event loop drive a standard crypto/tls.Conn
// without a goroutine per connection: a Transport is the net.Conn the
// tls.Conn runs over, fed with the bytes the loop received.
//
// During the handshake the Transport blocks: the handshake runs with the
// standard API (tls.Conn.Handshake, whose errors are sticky) on a
// goroutine of its own, and Read waits for the loop to Feed it, calling
// hooks around the wait (SetWaitHooks) so that the goroutine gives back
// its share of a bounded pool while its peer is silent. Ready tells the
// loop when a server's handshake can start without waiting: once the
// first handshake message is whole. After the
// handshake it does not: the loop offers whole records with Offer and
// calls tls.Conn.Read until it returns ErrWouldBlock, a temporary
// net.Error that crypto/tls does not make sticky (pin_test.go pins that
// behaviour of every Go release CI runs). Writes never block: they go to
// the function the Transport was made with, which queues them.
package tlsrec

// Record layer limits (RFC 8446 §5.1 and §5.2, RFC 5246 §6.2.3).
const (
	// HeaderLen is the length of a record's header: type, version,
	// length.
	HeaderLen = 5
	// MaxCiphertext is the largest record body TLS 1.2 allows (2^14 +
	// 2048); TLS 1.3 allows less (2^14 + 256). crypto/tls rejects a record
	// claiming more, with an alert, once it has read the header.
	MaxCiphertext = 16384 + 2048
)

// Complete returns the length of the longest prefix of b made of whole
// records: the bytes a tls.Conn can consume without waiting. A header
// that no record can follow (a length past MaxCiphertext) ends the
// prefix there with the header included, so that crypto/tls reads it and
// answers with its alert rather than the loop waiting for bytes that
// never make a record.
func Complete(b []byte) int {
	n := 0
	for len(b)-n >= HeaderLen {
		l := int(b[n+3])<<8 | int(b[n+4])
		if l > MaxCiphertext {
			return n + HeaderLen
		}
		if len(b)-n < HeaderLen+l {
			break
		}
		n += HeaderLen + l
	}
	return n
}

// recordLen returns the length, header included, of the record that b
// starts with; b holds at least its header.
func recordLen(b []byte) int {
	return HeaderLen + (int(b[3])<<8 | int(b[4]))
}
