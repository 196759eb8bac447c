package websocket

import "unicode/utf8"

// utf8State validates UTF-8 incrementally, across the fragments of a text
// message (RFC 6455 §8.1), so that a message invalid in its first fragment
// is refused at once (Autobahn 6.4: fail fast), not once it is whole. The
// zero value is at a character boundary.
//
// It follows RFC 3629 §4's table: need is how many continuation bytes the
// character begun still needs, and [lo, hi] bounds the next one (narrower
// than 0x80-0xBF after E0, ED, F0 and F4, which is how overlong forms,
// surrogates and code points past U+10FFFF are refused).
type utf8State struct {
	need, lo, hi byte
}

// feed checks p, the next bytes of the message, and reports whether they
// are valid so far.
func (s *utf8State) feed(p []byte) bool {
	// Finish the character a previous fragment began.
	for s.need > 0 && len(p) > 0 {
		if !s.step(p[0]) {
			return false
		}
		p = p[1:]
	}
	if len(p) == 0 {
		return true
	}
	// Whole characters in bulk; the last one may be cut short.
	cut := len(p) - partialTail(p)
	if !utf8.Valid(p[:cut]) {
		return false
	}
	for _, b := range p[cut:] {
		if !s.step(b) {
			return false
		}
	}
	return true
}

// done reports whether the message ended at a character boundary.
func (s *utf8State) done() bool { return s.need == 0 }

// step takes one byte.
func (s *utf8State) step(b byte) bool {
	if s.need > 0 {
		if b < s.lo || b > s.hi {
			return false
		}
		s.need--
		s.lo, s.hi = 0x80, 0xbf
		return true
	}
	s.lo, s.hi = 0x80, 0xbf
	switch {
	case b < 0x80:
	case b >= 0xc2 && b <= 0xdf:
		s.need = 1
	case b == 0xe0:
		s.need, s.lo = 2, 0xa0
	case b == 0xed:
		s.need, s.hi = 2, 0x9f
	case b >= 0xe1 && b <= 0xef:
		s.need = 2
	case b == 0xf0:
		s.need, s.lo = 3, 0x90
	case b == 0xf4:
		s.need, s.hi = 3, 0x8f
	case b >= 0xf1 && b <= 0xf3:
		s.need = 3
	default: // 0x80-0xC1 (a stray continuation, an overlong lead), 0xF5-0xFF
		return false
	}
	return true
}

// partialTail returns the length of the character that p's last bytes
// begin and do not finish (0 if p ends on a boundary, or with an invalid
// byte, which step refuses).
func partialTail(p []byte) int {
	for i := 1; i <= 3 && i <= len(p); i++ {
		b := p[len(p)-i]
		if b < 0x80 {
			return 0
		}
		if b >= 0xc0 { // a lead byte: does its character end within p?
			if n := leadLen(b); n > i {
				return i
			}
			return 0
		}
	}
	return 0
}

// leadLen is the length of the character whose lead byte is b.
func leadLen(b byte) int {
	switch {
	case b >= 0xf0:
		return 4
	case b >= 0xe0:
		return 3
	}
	return 2
}
