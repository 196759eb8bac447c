package websocket

import (
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"strings"
)

// acceptGUID is RFC 6455 §1.3's fixed GUID.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// The handshake's header names, spelled as http.Header keeps them
// (textproto.CanonicalMIMEHeaderKey's form): its Get, Values and Set
// then use them as they are, where "Sec-WebSocket-Key" would be copied
// into a new canonical string at every call, a garbage string per
// upgrade each. Header names are case-insensitive (RFC 9110 §5.1), and
// http.Header writes these spellings either way.
const (
	hdrAccept     = "Sec-Websocket-Accept"
	hdrExtensions = "Sec-Websocket-Extensions"
	hdrKey        = "Sec-Websocket-Key"
	hdrProtocol   = "Sec-Websocket-Protocol"
	hdrVersion    = "Sec-Websocket-Version"
)

// The 101 response's fixed values, shared by every response: each slice
// is full (len == cap), so that an append to one copies it. Nothing
// writes to a response's header after Upgrade.
var (
	upgradeValue    = []string{"websocket"}
	connectionValue = []string{"Upgrade"}
)

// acceptKey is the Sec-WebSocket-Accept value for a client's key
// (§4.2.2). It allocates only the string it returns.
func acceptKey(key string) string {
	var in [24 + len(acceptGUID)]byte // a valid key is 24 bytes: a longer one spills to the heap
	sum := sha1.Sum(append(append(in[:0], key...), acceptGUID...))
	var out [28]byte // base64 of 20 bytes
	base64.StdEncoding.Encode(out[:], sum[:])
	return string(out[:])
}

// validKey reports whether key is the base64 of 16 bytes (§4.2.1): 24
// characters, the last two padding.
func validKey(key string) bool {
	if len(key) != 24 {
		return false
	}
	var b [18]byte
	n, err := base64.StdEncoding.Decode(b[:], []byte(key))
	return err == nil && n == 16
}

// hasToken reports whether any of the comma-separated lists in h's values
// for name holds token (case-insensitively), as Connection and Upgrade
// headers are matched (§4.2.1).
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// tokens returns the comma-separated tokens of h's values for name.
func tokens(h http.Header, name string) []string {
	var ts []string
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				ts = append(ts, t)
			}
		}
	}
	return ts
}

// sameOrigin is the default CheckOrigin: no Origin (not a browser), or
// one whose host is the request's.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	_, host, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(host, r.Host)
}
