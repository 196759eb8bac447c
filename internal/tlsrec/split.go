package tlsrec

// fragment is the largest record body the handshake's reader passes on:
// a tls.Conn's input buffer holds one record at a time and keeps its
// capacity for good, and its first Grow makes room for 576 bytes, so
// records no larger than this never grow it. (Its handshake buffer still
// holds the ClientHello whole: a message is not a record.)
const fragment = 512

// splitter re-frames the plaintext handshake records a peer sends first
// (its ClientHello, and in TLS 1.2 the rest of its first flight) into
// records of at most fragment bytes, as RFC 8446 §5.1 and RFC 5246 §6.2.1
// allow any sender to: the same messages, cut into more records.
// Encrypted records cannot be cut, so it stops at the first record that
// is not a handshake record (a ChangeCipherSpec, application data or an
// alert) and passes the rest through as it is.
type splitter struct {
	done     bool // passing bytes through
	hdr      [HeaderLen]byte
	hdrN     int // header bytes collected
	bodyLeft int // bytes of the current record still to come
	fragLeft int // bytes of the current fragment still to come
	whole    int // records received whole
}

// ready reports whether a handshake can act on what was added without
// waiting: a record came whole, or bytes crypto/tls will judge at once
// (not a handshake record, an impossible length) were passed through.
func (s *splitter) ready() bool { return s.whole > 0 || s.done }

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
			if s.hdr[0] != recordTypeHandshake || s.bodyLeft == 0 || s.bodyLeft > MaxCiphertext {
				s.done = true // crypto/tls judges it as it came
				return append(append(dst, s.hdr[:]...), b...)
			}
		}
		if s.fragLeft == 0 {
			s.fragLeft = min(fragment, s.bodyLeft)
			dst = append(dst, s.hdr[0], s.hdr[1], s.hdr[2], byte(s.fragLeft>>8), byte(s.fragLeft))
		}
		k := min(len(b), s.fragLeft)
		dst = append(dst, b[:k]...)
		b = b[k:]
		s.fragLeft -= k
		s.bodyLeft -= k
		if s.bodyLeft == 0 {
			s.whole++
		}
	}
	return append(dst, b...)
}
