package main

import "bytes"

// Limits on what one command may hold. Redis has the same kinds of limit;
// these are lower, as the engine keeps an unfinished command in memory
// until the rest arrives.
const (
	maxInline  = 64 << 10 // an inline command's line (as Redis)
	maxArgs    = 1 << 16  // arguments of one command (Redis: 1 Mi)
	maxBulk    = 8 << 20  // bytes of one argument (Redis: 512 MiB)
	maxRequest = 16 << 20 // bytes of one unfinished command
	maxDigits  = 18       // digits of a length, so it cannot overflow
)

// protocolError reports a malformed command. The server replies with it
// and closes the connection, as Redis does: after a framing error it
// cannot tell where the next command starts.
type protocolError string

func (e protocolError) Error() string { return "Protocol error: " + string(e) }

// parseCommand parses the command at the start of b, in either form of
// RESP2 (https://redis.io/docs/reference/protocol-spec/):
//
//   - an array of bulk strings, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", as
//     clients and redis-benchmark send;
//   - an inline command, a line of words separated by blanks, "GET k\r\n"
//     (or ending in a bare "\n"), as typed into telnet. Quotes have no
//     special meaning here, unlike in Redis.
//
// It appends the arguments to args[:0], as slices of b, and returns them
// with the length of the command in b. n is 0 when b does not hold a
// whole command yet: call again with more bytes. An empty command (a
// blank line, "*0\r\n" or "*-1\r\n") has n > 0 and no arguments. A
// malformed command returns a protocolError.
//
// parseCommand keeps no state between calls: an unfinished command is
// parsed again from its start when more bytes come, which costs a look
// at each length line, not at the data.
func parseCommand(b []byte, args [][]byte) (_ [][]byte, n int, err error) {
	args = args[:0]
	if len(b) == 0 {
		return args, 0, nil
	}
	if b[0] != '*' {
		return parseInline(b, args)
	}
	count, p, err := parseLength(b, 0, "invalid multibulk length")
	if p == 0 || err != nil {
		return args, 0, err
	}
	if count <= 0 {
		return args, p, nil // Redis ignores empty and null arrays
	}
	if count > maxArgs {
		return args, 0, protocolError("invalid multibulk length")
	}
	for range count {
		if p == len(b) {
			return args[:0], 0, nil
		}
		if b[p] != '$' {
			return args[:0], 0, protocolError("expected '$', got '" + string(b[p]) + "'")
		}
		size, q, err := parseLength(b, p, "invalid bulk length")
		if q == 0 || err != nil {
			return args[:0], 0, err
		}
		if size < 0 || size > maxBulk {
			return args[:0], 0, protocolError("invalid bulk length")
		}
		end := q + size
		if end+2 > len(b) {
			return args[:0], 0, nil
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return args[:0], 0, protocolError("expected CRLF after bulk string")
		}
		args = append(args, b[q:end:end])
		p = end + 2
	}
	return args, p, nil
}

// parseLength parses the length line at b[p:], a type byte ('*' or '$')
// then an optional minus sign and decimal digits then CRLF. It returns
// the value and the offset after the CRLF, or next == 0 if the line is
// not all there yet. msg describes a malformed line.
func parseLength(b []byte, p int, msg string) (v, next int, err error) {
	digits := b[p+1:]
	limit := 1 + maxDigits // a sign and the digits
	i := bytes.IndexByte(digits[:min(len(digits), limit+1)], '\r')
	switch {
	case i < 0 && len(digits) <= limit:
		return 0, 0, nil
	case i < 0:
		return 0, 0, protocolError(msg)
	case i+1 == len(digits):
		return 0, 0, nil // the '\n' is still to come
	case digits[i+1] != '\n':
		return 0, 0, protocolError(msg)
	}
	v, ok := atoi(digits[:i])
	if !ok {
		return 0, 0, protocolError(msg)
	}
	return v, p + 1 + i + 2, nil
}

// atoi parses an optional minus sign and 1 to maxDigits decimal digits.
func atoi(b []byte) (int, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > maxDigits {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseInline parses an inline command: words separated by spaces or
// tabs, up to a '\n' (a '\r' before it is dropped).
func parseInline(b []byte, args [][]byte) ([][]byte, int, error) {
	i := bytes.IndexByte(b[:min(len(b), maxInline)], '\n')
	if i < 0 {
		if len(b) >= maxInline {
			return args, 0, protocolError("too big inline request")
		}
		return args, 0, nil
	}
	line := b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	for len(line) > 0 {
		j := 0
		for j < len(line) && isBlank(line[j]) {
			j++
		}
		line = line[j:]
		j = 0
		for j < len(line) && !isBlank(line[j]) {
			j++
		}
		if j > 0 {
			args = append(args, line[:j:j])
		}
		line = line[j:]
	}
	return args, i + 1, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }
