package main

import (
	"bytes"
	"net/http"
)

// maxHead is the most bytes a request head (request line and header
// fields) may take; a longer one gets 431.
const maxHead = 8 << 10

// request is what the server needs of a request head.
type request struct {
	http11    bool  // HTTP/1.1, not HTTP/1.0
	head      bool  // the method is HEAD: the response has no body
	keepAlive bool  // the connection stays open after the response
	bodyLen   int64 // bytes of body that follow the head
}

// statusError is a request the server refuses, with the status of its
// response. The connection closes after it.
type statusError int

func (e statusError) Error() string { return http.StatusText(int(e)) }

var crlf2 = []byte("\r\n\r\n")

// parseRequest parses the request head at the start of b: the request
// line and the header fields up to the empty line (RFC 9112 §2.1). It
// returns the request and the length of the head, or n == 0 if the head
// is not all there yet. A head the server refuses returns a statusError.
//
// It is strict where leniency invites request smuggling: lines end in
// CRLF, a field name is a token right before its colon, no line folding
// (§5.2), one Host (RFC 9112 §3.2), and Content-Length digits only, one
// value (§6.3). Transfer-Encoding is not implemented: 501.
func parseRequest(b []byte) (req request, n int, err error) {
	// A server should ignore empty lines before a request line (§2.2);
	// they count towards maxHead.
	window := b[:min(len(b), maxHead)]
	for len(window) >= n+2 && window[n] == '\r' && window[n+1] == '\n' {
		n += 2
	}
	end := bytes.Index(window[n:], crlf2)
	if end < 0 {
		if len(window) == maxHead {
			return req, 0, statusError(http.StatusRequestHeaderFieldsTooLarge)
		}
		return req, 0, nil
	}
	head := window[n : n+end+2] // each line with its CRLF
	n += end + 4

	i := bytes.Index(head, crlf2[:2])
	req, err = parseRequestLine(head[:i])
	if err != nil {
		return req, 0, err
	}
	var f fields
	for rest := head[i+2:]; len(rest) > 0; {
		i := bytes.Index(rest, crlf2[:2])
		if err := f.add(rest[:i]); err != nil {
			return req, 0, err
		}
		rest = rest[i+2:]
	}
	if f.transferEncoding {
		return req, 0, statusError(http.StatusNotImplemented)
	}
	if f.hosts > 1 || (req.http11 && f.hosts == 0) { // HTTP/1.0 needs none
		return req, 0, statusError(http.StatusBadRequest)
	}
	req.bodyLen = f.contentLength
	switch {
	case f.close:
		req.keepAlive = false
	case f.keepAlive:
		req.keepAlive = true
	}
	return req, n, nil
}

// parseRequestLine parses "METHOD SP TARGET SP HTTP/1.x" (RFC 9112 §3).
// The request's keepAlive is the version's default: true for HTTP/1.1.
func parseRequestLine(line []byte) (request, error) {
	var req request
	method, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || !isToken(method) {
		return req, statusError(http.StatusBadRequest)
	}
	target, version, ok := bytes.Cut(rest, []byte{' '})
	if !ok || len(target) == 0 {
		return req, statusError(http.StatusBadRequest)
	}
	for _, c := range target {
		if c <= ' ' || c >= 0x7f {
			return req, statusError(http.StatusBadRequest)
		}
	}
	switch string(version) {
	case "HTTP/1.1":
		req.http11, req.keepAlive = true, true
	case "HTTP/1.0":
	default:
		if len(version) == 8 && string(version[:5]) == "HTTP/" && isDigit(version[5]) &&
			version[6] == '.' && isDigit(version[7]) {
			return req, statusError(http.StatusHTTPVersionNotSupported)
		}
		return req, statusError(http.StatusBadRequest)
	}
	req.head = string(method) == "HEAD"
	return req, nil
}

// fields gathers what the server reads of the header fields.
type fields struct {
	hosts            int
	contentLength    int64
	sawLength        bool // a Content-Length was seen
	transferEncoding bool
	close, keepAlive bool // Connection options
}

// add parses one field line, "name: value" (RFC 9112 §5).
func (f *fields) add(line []byte) error {
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok || !isToken(name) { // also refuses folding and space before ':'
		return statusError(http.StatusBadRequest)
	}
	value = bytes.Trim(value, " \t")
	for _, c := range value {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return statusError(http.StatusBadRequest)
		}
	}
	switch {
	case equalFold(name, "host"):
		f.hosts++
	case equalFold(name, "content-length"):
		v, ok := parseLength(value)
		if !ok || (f.sawLength && v != f.contentLength) {
			return statusError(http.StatusBadRequest)
		}
		f.contentLength, f.sawLength = v, true
	case equalFold(name, "transfer-encoding"):
		f.transferEncoding = true
	case equalFold(name, "connection"):
		for opt := range bytes.SplitSeq(value, []byte{','}) {
			opt = bytes.Trim(opt, " \t")
			switch {
			case equalFold(opt, "close"):
				f.close = true
			case equalFold(opt, "keep-alive"):
				f.keepAlive = true
			}
		}
	}
	return nil
}

// parseLength parses a Content-Length: 1 to 18 digits.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isToken reports whether b is a token (RFC 9110 §5.6.2): one or more
// tchars.
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isTchar(c) {
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c):
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// equalFold reports whether b equals lower, ignoring the case of ASCII
// letters. lower is in lower case.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
