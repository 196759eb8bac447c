package httpd

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/galeio/gale/internal/h2frame"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"
)

// The pseudo-header fields of a request (§8.3.1), and RFC 8441's
// :protocol, each at most once.
type pseudo struct {
	method, scheme, authority, path, protocol string
	seen                                      uint8
}

func (p *pseudo) set(f hpack.HeaderField) bool {
	var dst *string
	var bit uint8
	switch f.Name {
	case ":method":
		dst, bit = &p.method, 1
	case ":scheme":
		dst, bit = &p.scheme, 2
	case ":authority":
		dst, bit = &p.authority, 4
	case ":path":
		dst, bit = &p.path, 8
	case ":protocol":
		dst, bit = &p.protocol, 16
	default:
		return false // unknown, or a response's (:status)
	}
	if p.seen&bit != 0 {
		return false
	}
	p.seen |= bit
	*dst = f.Value
	return true
}

// request builds a stream's *http.Request from its header block, with
// the checks of §8.2 and §8.3: a malformed request is a stream error of
// type PROTOCOL_ERROR. It returns the body's Content-Length, or -1.
func (h *h2conn) request(id uint32, fields []hpack.HeaderField, end bool) (*http.Request, int64, error) {
	malformed := func(why string) (*http.Request, int64, error) {
		return nil, 0, h2Error(id, h2frame.ErrCodeProtocol, "malformed request: %s", why)
	}
	var p pseudo
	hdr := make(http.Header, len(fields))
	regular := false
	for _, f := range fields {
		if f.IsPseudo() {
			if regular || !p.set(f) {
				return malformed("pseudo-header field " + f.Name)
			}
			continue
		}
		regular = true
		if why := checkField(f); why != "" {
			return malformed(why)
		}
		k := http.CanonicalHeaderKey(f.Name)
		hdr[k] = append(hdr[k], f.Value)
	}
	if why := p.check(); why != "" {
		return malformed(why)
	}
	if p.protocol != "" && !h.s.ExtendedConnect {
		return malformed(":protocol, and extended CONNECT is not announced")
	}
	if vv := hdr["Cookie"]; len(vv) > 1 {
		hdr["Cookie"] = []string{strings.Join(vv, "; ")} // §8.2.3
	}
	declared := int64(-1)
	if vv := hdr["Content-Length"]; len(vv) > 0 {
		n, err := strconv.ParseInt(vv[0], 10, 64)
		for _, v := range vv[1:] {
			if v != vv[0] {
				err = strconv.ErrSyntax
			}
		}
		if err != nil || n < 0 {
			return malformed("Content-Length")
		}
		if end && n != 0 {
			return malformed("Content-Length with no body")
		}
		declared = n
	}
	req, err := h.newRequest(&p, hdr)
	if err != nil {
		return malformed(err.Error())
	}
	switch {
	case end:
		req.ContentLength = 0
	case declared >= 0:
		req.ContentLength = declared
	default:
		req.ContentLength = -1
	}
	return req, declared, nil
}

// checkField checks a regular field of a request: a lower-case, valid
// name that is not one of HTTP/1's connection fields (§8.2.2), and a
// valid value. It returns what is wrong, or "".
func checkField(f hpack.HeaderField) string {
	if !httpguts.ValidHeaderFieldName(f.Name) {
		return "field name " + strconv.Quote(f.Name)
	}
	for i := 0; i < len(f.Name); i++ {
		if c := f.Name[i]; 'A' <= c && c <= 'Z' {
			return "upper-case field name " + strconv.Quote(f.Name)
		}
	}
	switch f.Name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return "connection-specific field " + f.Name
	case "te":
		if f.Value != "trailers" {
			return "TE other than trailers"
		}
	}
	if !httpguts.ValidHeaderFieldValue(f.Value) {
		return "field value of " + f.Name
	}
	return ""
}

// check checks the pseudo-header fields a request must have: all but
// :authority, or for CONNECT :method and :authority only (§8.5), unless
// it is RFC 8441's extended CONNECT, which has all and :protocol.
func (p *pseudo) check() string {
	switch {
	case p.protocol != "":
		if p.method != "CONNECT" || p.scheme == "" || p.path == "" || p.authority == "" {
			return ":protocol outside an extended CONNECT"
		}
	case p.method == "CONNECT":
		if p.scheme != "" || p.path != "" || p.authority == "" {
			return "CONNECT's pseudo-header fields"
		}
	case p.method == "" || p.scheme == "" || p.path == "":
		return "missing :method, :scheme or :path"
	}
	if !httpguts.ValidHostHeader(p.authority) {
		return ":authority"
	}
	return ""
}

// newRequest makes the request, as net/http's HTTP/2 server does: the
// :authority is its Host (or the Host field), and the Trailer field
// declares the trailers to expect.
func (h *h2conn) newRequest(p *pseudo, hdr http.Header) (*http.Request, error) {
	host := p.authority
	if host == "" {
		host = hdr.Get("Host")
	}
	delete(hdr, "Host")
	req := &http.Request{
		Method:     p.method,
		Proto:      "HTTP/2.0",
		ProtoMajor: 2,
		Header:     hdr,
		Host:       host,
		RemoteAddr: h.c.raddr,
		TLS:        h.c.tls,
	}
	if p.method == "CONNECT" && p.protocol == "" {
		req.URL = &url.URL{Host: host}
		req.RequestURI = host
	} else {
		u, err := url.ParseRequestURI(p.path)
		if err != nil {
			return nil, err
		}
		req.URL, req.RequestURI = u, p.path
	}
	if p.protocol != "" {
		hdr[":protocol"] = []string{p.protocol}
	}
	for _, v := range hdr["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); httpguts.ValidTrailerHeader(k) {
				if req.Trailer == nil {
					req.Trailer = make(http.Header)
				}
				req.Trailer[k] = nil
			}
		}
	}
	delete(hdr, "Trailer")
	return req, nil
}

// trailerFields checks a block of trailers (no pseudo-header fields,
// §8.1) and returns them.
func trailerFields(id uint32, fields []hpack.HeaderField) (http.Header, error) {
	t := make(http.Header, len(fields))
	for _, f := range fields {
		if f.IsPseudo() {
			return nil, h2Error(id, h2frame.ErrCodeProtocol, "pseudo-header field in trailers")
		}
		if why := checkField(f); why != "" {
			return nil, h2Error(id, h2frame.ErrCodeProtocol, "malformed trailers: %s", why)
		}
		k := http.CanonicalHeaderKey(f.Name)
		t[k] = append(t[k], f.Value)
	}
	return t, nil
}
