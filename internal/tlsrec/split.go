package tlsrec

// fragment is the largest record body the handshake's reader passes on:
// a tls.Conn's input buffer holds one record at a time and keeps its
// capacity for good, and its first Grow makes room for 576 bytes, so
// records no larger than this never grow it. (Its handshake buffer still
// holds the ClientHello whole: a message is not a record. See
// fragmentSize for how that buffer is kept small.)
const fragment = 512

// fragmentSize returns the size of the fragments a handshake record body
// of n bytes is cut into: n divided by the smallest power of two that
// brings it to fragment bytes or less, rounded up.
//
// The tls.Conn appends each fragment to its handshake buffer (a
// bytes.Buffer, which never shrinks), and a bytes.Buffer too small for a
// write grows to twice its capacity or to what it must hold, whichever is
// more. Equal fragments make the buffer's capacity double from the first
// fragment's size up to no more than the body's: a 1,482-byte ClientHello
// (X25519MLKEM768's key share) in fragments of 371 bytes ends in a
// 1,536-byte buffer (384, 768, 1,536), where fragments of 512 bytes grow
// it to 2,048 (512, 1,024, 2,048). TestFragmentSizeBuffer checks it.
func fragmentSize(n int) int {
	k := n
	for j := 1; k > fragment; j++ {
		k = (n + 1<<j - 1) >> j
	}
	return k
}

// MaxFirstMessage is the largest first handshake message (a ClientHello,
// or a client's ServerHello) crypto/tls reads: its maxHandshake, past
// which it refuses the message once it has read the header. A test pins
// it (pin_test.go).
const MaxFirstMessage = 65536

// splitter re-frames the plaintext handshake records a peer sends first
// (its ClientHello, and in TLS 1.2 the rest of its first flight) into
// records of at most fragment bytes, as RFC 8446 §5.1 and RFC 5246 §6.2.1
// allow any sender to: the same messages, cut into more records.
// Encrypted records cannot be cut, so it stops at the first record that
// is not a handshake record (a ChangeCipherSpec, application data or an
// alert) and passes the rest through as it is.
//
// It also follows the framing of the first handshake message inside
// those records (RFC 8446 §4: a type byte and a 24-bit length), which may
// span several records, so that ready can tell when that message is
// whole.
type splitter struct {
	done     bool // passing bytes through
	hdr      [HeaderLen]byte
	hdrN     int // header bytes collected
	bodyLeft int // bytes of the current record still to come
	fragSize int // the current record's fragments (fragmentSize)
	fragLeft int // bytes of the current fragment still to come

	// The first handshake message.
	first   bool // whole, or judged from its header
	msgHdr  [4]byte
	msgHdrN int // its header's bytes received
	msgLeft int // its body's bytes still to come
}

// ready reports whether a handshake can act on what was added without
// waiting: the first handshake message came whole, or bytes crypto/tls
// judges at once were passed through (not a handshake record, an
// impossible length or version, a first message longer than crypto/tls
// reads).
func (s *splitter) ready() bool { return s.first || s.done }

// add appends b to dst, re-framed, and returns dst.
func (s *splitter) add(dst, b []byte) []byte {
	for len(b) > 0 && !s.done {
		if s.bodyLeft == 0 {
			k := copy(s.hdr[s.hdrN:], b)
			s.hdrN += k
			b = b[k:]
			if s.hdrN < HeaderLen {
				return dst
			}
			s.hdrN = 0
			s.bodyLeft = int(s.hdr[3])<<8 | int(s.hdr[4])
			s.fragSize = fragmentSize(s.bodyLeft)
			if s.judged() {
				s.done = true // crypto/tls judges it as it came
				return append(append(dst, s.hdr[:]...), b...)
			}
		}
		if s.fragLeft == 0 {
			s.fragLeft = min(s.fragSize, s.bodyLeft)
			dst = append(dst, s.hdr[0], s.hdr[1], s.hdr[2], byte(s.fragLeft>>8), byte(s.fragLeft))
		}
		k := min(len(b), s.fragLeft)
		dst = append(dst, b[:k]...)
		s.message(b[:k])
		b = b[k:]
		s.fragLeft -= k
		s.bodyLeft -= k
	}
	return append(dst, b...)
}

// judged reports whether the record header in s.hdr is one crypto/tls
// refuses without reading its body: not a handshake record, an empty or
// oversized one, or, before the first message is whole, a version no TLS
// has (crypto/tls's "does not look like a TLS handshake").
func (s *splitter) judged() bool {
	return s.hdr[0] != recordTypeHandshake || s.bodyLeft == 0 || s.bodyLeft > MaxCiphertext ||
		!s.first && s.hdr[1] >= 0x10
}

// message follows the first handshake message through b, the next
// bytes of the handshake records' bodies.
func (s *splitter) message(b []byte) {
	if s.first {
		return
	}
	if s.msgHdrN < len(s.msgHdr) {
		k := copy(s.msgHdr[s.msgHdrN:], b)
		s.msgHdrN += k
		b = b[k:]
		if s.msgHdrN < len(s.msgHdr) {
			return
		}
		s.msgLeft = int(s.msgHdr[1])<<16 | int(s.msgHdr[2])<<8 | int(s.msgHdr[3])
		if s.msgLeft > MaxFirstMessage {
			s.first = true // refused once its header is read
			return
		}
	}
	s.msgLeft -= min(len(b), s.msgLeft)
	s.first = s.msgLeft == 0
}
