package main

import "bytes"

// maxHead bounds a request head: the request line and header fields.
const maxHead = 8 << 10

// head is what the server reads of a request head.
type head struct {
	method    []byte // valid until the Inbound it came from moves on
	http11    bool   // HTTP/1.1, not HTTP/1.0
	keepAlive bool   // the connection stays open after the response
	body      bool   // a body follows (Content-Length or Transfer-Encoding)
}

// Statuses of the responses the server gives.
const (
	statusOK             = 200
	statusBadRequest     = 400
	statusHeadTooLarge   = 431
	statusNotImplemented = 501
)

// statusError refuses a request with its status; the connection closes
// after the response.
type statusError int

func (e statusError) Error() string { return statusText(int(e)) }

func statusText(code int) string {
	switch code {
	case statusOK:
		return "OK"
	case statusBadRequest:
		return "Bad Request"
	case statusHeadTooLarge:
		return "Request Header Fields Too Large"
	case statusNotImplemented:
		return "Not Implemented"
	}
	return "Error"
}

var (
	crlf      = []byte("\r\n")
	crlf2     = []byte("\r\n\r\n")
	version11 = []byte("HTTP/1.1")
	version10 = []byte("HTTP/1.0")
)

// parseHead parses the request head at the start of b (RFC 9112 §2.1)
// and returns its length, or 0 if b does not hold all of it yet. A head
// the server refuses returns a statusError.
func parseHead(b []byte) (h head, n int, err error) {
	end := bytes.Index(b[:min(len(b), maxHead)], crlf2)
	if end < 0 {
		if len(b) >= maxHead {
			return h, 0, statusError(statusHeadTooLarge)
		}
		return h, 0, nil
	}
	line, fields, _ := bytes.Cut(b[:end], crlf)
	h, err = parseRequestLine(line)
	if err != nil {
		return h, 0, err
	}
	if err := h.parseFields(fields); err != nil {
		return h, 0, err
	}
	return h, end + len(crlf2), nil
}

// parseRequestLine parses "method SP target SP version" (RFC 9112 §3);
// the version sets whether the connection stays open by default.
func parseRequestLine(line []byte) (head, error) {
	var h head
	method, rest, ok1 := bytes.Cut(line, []byte{' '})
	target, version, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 {
		return h, statusError(statusBadRequest)
	}
	h.method = method
	switch {
	case bytes.Equal(version, version11):
		h.http11, h.keepAlive = true, true
	case bytes.Equal(version, version10):
	default:
		return h, statusError(statusBadRequest)
	}
	return h, nil
}

// parseFields reads the header fields the server cares about: Host, which
// HTTP/1.1 requires once (RFC 9112 §3.2), Connection (RFC 9110 §7.6.1),
// and Content-Length and Transfer-Encoding, which announce a body (RFC
// 9112 §6).
func (h *head) parseFields(fields []byte) error {
	hosts := 0
	var closeOpt, keepAliveOpt bool
	for len(fields) > 0 {
		var line []byte
		line, fields, _ = bytes.Cut(fields, crlf)
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
			return statusError(statusBadRequest) // also a folded line
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("host")):
			hosts++
		case bytes.EqualFold(name, []byte("connection")):
			c, k := connectionOptions(value)
			closeOpt, keepAliveOpt = closeOpt || c, keepAliveOpt || k
		case bytes.EqualFold(name, []byte("content-length")):
			h.body = h.body || !bytes.Equal(value, []byte("0"))
		case bytes.EqualFold(name, []byte("transfer-encoding")):
			h.body = true
		}
	}
	if hosts > 1 || (h.http11 && hosts == 0) {
		return statusError(statusBadRequest)
	}
	switch {
	case closeOpt:
		h.keepAlive = false
	case keepAliveOpt:
		h.keepAlive = true
	}
	return nil
}

// connectionOptions reports whether a Connection field's value has the
// options close and keep-alive.
func connectionOptions(value []byte) (closeOpt, keepAliveOpt bool) {
	for opt := range bytes.SplitSeq(value, []byte{','}) {
		opt = bytes.TrimSpace(opt)
		closeOpt = closeOpt || bytes.EqualFold(opt, []byte("close"))
		keepAliveOpt = keepAliveOpt || bytes.EqualFold(opt, []byte("keep-alive"))
	}
	return closeOpt, keepAliveOpt
}
