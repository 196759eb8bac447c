package main

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// maxNick is the longest nickname, in characters (runes).
const maxNick = 32

// nextLine returns the first line of b, without its "\n" or "\r\n", and
// the bytes it takes in b (0 when b holds no whole line yet). tooLong
// reports a line of more than max bytes, whole or not: it is known as soon
// as max+2 bytes have come without a "\n" (max+1 could still be a line of
// max bytes and the "\r" of its "\r\n"), so the search stops there and a
// client that never ends its line costs one look at max+2 bytes per read.
// line is a slice of b.
func nextLine(b []byte, max int) (line []byte, n int, tooLong bool) {
	i := bytes.IndexByte(b[:min(len(b), max+2)], '\n')
	if i < 0 {
		return nil, 0, len(b) > max+1 || (len(b) == max+1 && b[max] != '\r')
	}
	line = b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, i + 1, len(line) > max
}

// validNick reports whether b is a valid nickname: 1 to maxNick printable
// characters of valid UTF-8, without spaces or colons, which would let a
// nickname pass for the start of another client's line ("alice: ..."),
// and not starting with '/', which starts a command.
func validNick(b []byte) bool {
	if len(b) == 0 || b[0] == '/' || !utf8.Valid(b) || utf8.RuneCount(b) > maxNick {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) || r == ' ' || r == ':' {
			return false
		}
	}
	return true
}

// appendClean appends text with its control characters (but tab)
// replaced by '?', so that a client cannot move another's cursor, clear
// its screen or start a fake line with a lone "\r".
func appendClean(dst, text []byte) []byte {
	for _, c := range text {
		if (c < ' ' && c != '\t') || c == 0x7f {
			c = '?'
		}
		dst = append(dst, c)
	}
	return dst
}
