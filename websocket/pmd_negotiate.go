package websocket

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file negotiates permessage-deflate (RFC 7692 §7.1) from the
// Sec-WebSocket-Extensions headers: their syntax (RFC 6455 §9.1), the
// server's choice among a client's offers, and the client's check of the
// server's answer.

// The extension's name and parameters (RFC 7692 §7).
const (
	pmdName             = "permessage-deflate"
	serverNoTakeover    = "server_no_context_takeover"
	clientNoTakeover    = "client_no_context_takeover"
	serverMaxWindowBits = "server_max_window_bits"
	clientMaxWindowBits = "client_max_window_bits"
)

// extension is one element of a Sec-WebSocket-Extensions list.
type extension struct {
	name   string
	params []extParam
}

// extParam is one of an extension's parameters; a quoted value is kept
// unquoted.
type extParam struct {
	name     string
	value    string
	hasValue bool
}

// parseExtensions appends to dst the extensions listed in v, one
// Sec-WebSocket-Extensions value (RFC 6455 §9.1):
//
//	extension-list  = 1#extension
//	extension       = token *( ";" extension-param )
//	extension-param = token [ "=" ( token / quoted-string ) ]
//
// with optional whitespace around the separators. A value that is only
// whitespace lists nothing (some servers send an empty header); anything
// else off the grammar is an error.
func parseExtensions(dst []extension, v string) ([]extension, error) {
	l := extLexer{s: v}
	l.skipSpace()
	if l.done() {
		return dst, nil
	}
	for {
		ext, err := l.extension()
		if err != nil {
			return dst, err
		}
		dst = append(dst, ext)
		if l.done() {
			return dst, nil
		}
		if !l.consume(',') {
			return dst, l.fail("expected ',' or ';'")
		}
		l.skipSpace()
	}
}

// extLexer walks a Sec-WebSocket-Extensions value.
type extLexer struct {
	s string
	i int
}

func (l *extLexer) done() bool { return l.i == len(l.s) }

// fail returns a syntax error at the current position.
func (l *extLexer) fail(what string) error {
	return fmt.Errorf("%s at offset %d", what, l.i)
}

// skipSpace skips optional whitespace (spaces and tabs).
func (l *extLexer) skipSpace() {
	for l.i < len(l.s) && (l.s[l.i] == ' ' || l.s[l.i] == '\t') {
		l.i++
	}
}

// consume skips c and the whitespace after it if c is next.
func (l *extLexer) consume(c byte) bool {
	if l.i == len(l.s) || l.s[l.i] != c {
		return false
	}
	l.i++
	l.skipSpace()
	return true
}

// extension reads `token *( ";" param )` and the whitespace after it.
func (l *extLexer) extension() (extension, error) {
	name, err := l.token()
	if err != nil {
		return extension{}, err
	}
	ext := extension{name: name}
	l.skipSpace()
	for l.consume(';') {
		p, err := l.param()
		if err != nil {
			return extension{}, err
		}
		ext.params = append(ext.params, p)
	}
	return ext, nil
}

// param reads `token [ "=" ( token / quoted-string ) ]` and the
// whitespace after it.
func (l *extLexer) param() (extParam, error) {
	name, err := l.token()
	if err != nil {
		return extParam{}, err
	}
	p := extParam{name: name}
	l.skipSpace()
	if !l.consume('=') {
		return p, nil
	}
	if l.i < len(l.s) && l.s[l.i] == '"' {
		p.value, err = l.quoted()
	} else {
		p.value, err = l.token()
	}
	p.hasValue = true
	l.skipSpace()
	return p, err
}

// token reads a token (RFC 9110 §5.6.2): one or more tchars.
func (l *extLexer) token() (string, error) {
	start := l.i
	for l.i < len(l.s) && isTokenChar(l.s[l.i]) {
		l.i++
	}
	if l.i == start {
		return "", l.fail("expected a token")
	}
	return l.s[start:l.i], nil
}

// quoted reads a quoted-string (RFC 9110 §5.6.4) and returns it unquoted.
// RFC 6455 §9.1 requires the unquoted value to be a token.
func (l *extLexer) quoted() (string, error) {
	l.i++ // the opening quote
	var b []byte
	for l.i < len(l.s) {
		c := l.s[l.i]
		l.i++
		switch {
		case c == '"':
			if !isToken(string(b)) {
				return "", l.fail("quoted value not a token")
			}
			return string(b), nil
		case c == '\\' && l.i < len(l.s):
			c = l.s[l.i]
			l.i++
		case c == '\\':
			return "", l.fail("unterminated quoted-string")
		}
		b = append(b, c)
	}
	return "", l.fail("unterminated quoted-string")
}

// isToken reports whether s is a (non-empty) token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return s != ""
}

// isTokenChar reports whether c is a tchar (RFC 9110 §5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c < 0x80 && strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// deflateParams are a permessage-deflate offer's or answer's parameters.
type deflateParams struct {
	serverNoTakeover bool
	clientNoTakeover bool
	serverBits       uint8 // 0 when absent
	clientBits       uint8 // 0 when absent or without a value
}

// errBitsValue is the error for a window-bits parameter whose value is
// missing or not 8..15.
var errBitsValue = errors.New("window bits must be 8 to 15")

// parseDeflateParams checks a permessage-deflate extension's parameters
// against RFC 7692 §7.1: only its four, each at most once, the
// no_context_takeover ones without a value, the window bits 8..15.
// client_max_window_bits may lack a value in an offer only (answer false).
func parseDeflateParams(params []extParam, answer bool) (deflateParams, error) {
	var dp deflateParams
	var seen [4]bool // by paramIndex
	for _, p := range params {
		name := strings.ToLower(p.name)
		i := paramIndex(name)
		switch {
		case i < 0:
			return dp, fmt.Errorf("unknown parameter %s", p.name)
		case seen[i]:
			return dp, fmt.Errorf("duplicate parameter %s", name)
		}
		seen[i] = true
		if err := dp.set(name, p, answer); err != nil {
			return dp, fmt.Errorf("parameter %s: %w", name, err)
		}
	}
	return dp, nil
}

// paramIndex numbers permessage-deflate's parameters, -1 for others.
func paramIndex(name string) int {
	switch name {
	case serverNoTakeover:
		return 0
	case clientNoTakeover:
		return 1
	case serverMaxWindowBits:
		return 2
	case clientMaxWindowBits:
		return 3
	}
	return -1
}

// set records parameter p, one of permessage-deflate's (its name
// lowercased), in dp.
func (dp *deflateParams) set(name string, p extParam, answer bool) error {
	var err error
	switch name {
	case serverNoTakeover, clientNoTakeover:
		if p.hasValue {
			return errors.New("takes no value")
		}
		dp.serverNoTakeover = dp.serverNoTakeover || name == serverNoTakeover
		dp.clientNoTakeover = dp.clientNoTakeover || name == clientNoTakeover
	case serverMaxWindowBits:
		dp.serverBits, err = windowBits(p)
	case clientMaxWindowBits:
		if p.hasValue || answer {
			dp.clientBits, err = windowBits(p)
		}
	}
	return err
}

// windowBits returns p's value as window bits, 8..15 (RFC 7692 §7.1.2:
// 1*DIGIT, quoted or not).
func windowBits(p extParam) (uint8, error) {
	if !p.hasValue || len(p.value) > 2 {
		return 0, errBitsValue
	}
	n, err := strconv.Atoi(p.value)
	if err != nil || p.value[0] == '+' || p.value[0] == '-' || n < minWindowBits || n > maxWindowBits {
		return 0, errBitsValue
	}
	return uint8(n), nil
}

// negotiateServer reads the client's offers (the values of its
// Sec-WebSocket-Extensions headers, possibly several comma-separated
// offers each, possibly of other extensions) and picks the first
// permessage-deflate offer it can accept under mode (CompressionDisabled:
// never). It returns the agreement and the response's extension value
// (e.g. "permessage-deflate; client_no_context_takeover"), ok false if
// none was acceptable (then no extension is agreed on; never an error:
// a client's bad offer only costs it compression). A header value off the
// grammar is skipped whole, as its offers cannot be told apart.
func negotiateServer(offers []string, mode CompressionMode) (st pmdState, response string, ok bool) {
	if mode != CompressionEnabled && mode != CompressionContextTakeover {
		return pmdState{}, "", false
	}
	var exts []extension
	for _, v := range offers {
		list, err := parseExtensions(exts[:0], v)
		if err != nil {
			continue
		}
		exts = list
		for _, ext := range exts {
			if !strings.EqualFold(ext.name, pmdName) {
				continue
			}
			dp, err := parseDeflateParams(ext.params, false)
			if err != nil {
				continue // declined: try the next offer
			}
			st, response = acceptOffer(dp, mode)
			return st, response, true
		}
	}
	return pmdState{}, "", false
}

// acceptOffer returns the agreement on a valid offer and the response
// that tells the client of it (RFC 7692 §7.1):
//   - server_no_context_takeover is echoed: our output never refers back
//     across messages anyway;
//   - server_max_window_bits=N is echoed, and our output kept within 2^N;
//   - client_no_context_takeover is echoed, or asked for by a server that
//     keeps no window (CompressionEnabled; §7.1.1.2 lets it);
//   - otherwise the client may take its context over: keep a window of
//     2^client_max_window_bits bytes (a value the client promised not to
//     exceed, §7.1.2.2), 32 KiB without one.
func acceptOffer(dp deflateParams, mode CompressionMode) (pmdState, string) {
	st := pmdState{on: true, outBits: maxWindowBits}
	response := pmdName
	if dp.serverNoTakeover {
		response += "; " + serverNoTakeover
	}
	if dp.clientNoTakeover || mode != CompressionContextTakeover {
		response += "; " + clientNoTakeover
	} else {
		st.inTakeover = true
		st.win = newWindow(orDefault(dp.clientBits, maxWindowBits))
	}
	if dp.serverBits != 0 {
		st.outBits = dp.serverBits
		response += "; " + serverMaxWindowBits + "=" + strconv.Itoa(int(dp.serverBits))
	}
	return st, response
}

// orDefault returns bits, or def when bits is 0 (not given).
func orDefault(bits, def uint8) uint8 {
	if bits == 0 {
		return def
	}
	return bits
}

// clientOffer returns the Sec-WebSocket-Extensions value a client sends
// under mode ("" for CompressionDisabled). CompressionEnabled asks the
// server not to take its context over (we keep no window); both let the
// server limit our window (client_max_window_bits).
func clientOffer(mode CompressionMode) string {
	switch mode {
	case CompressionEnabled:
		return pmdName + "; " + serverNoTakeover + "; " + clientMaxWindowBits
	case CompressionContextTakeover:
		return pmdName + "; " + clientMaxWindowBits
	}
	return ""
}

// acceptResponse checks the server's answer (the values of its
// Sec-WebSocket-Extensions headers) against what clientOffer(mode)
// offered: no extension → zero pmdState, nil; a valid permessage-deflate
// answer → the agreement; anything else (an extension we did not offer, a
// parameter we did not offer or allow, duplicates, bad values, a missing
// server_no_context_takeover we asked for) → an error wrapping
// ErrBadHandshake: RFC 6455 §4.1 has the client fail the connection.
func acceptResponse(values []string, mode CompressionMode) (pmdState, error) {
	st, err := checkResponse(values, mode)
	if err != nil {
		return pmdState{}, fmt.Errorf("%w: Sec-WebSocket-Extensions: %v", ErrBadHandshake, err)
	}
	return st, nil
}

// checkResponse is acceptResponse without the wrapping.
func checkResponse(values []string, mode CompressionMode) (pmdState, error) {
	var exts []extension
	for _, v := range values {
		var err error
		if exts, err = parseExtensions(exts, v); err != nil {
			return pmdState{}, err
		}
	}
	switch {
	case len(exts) == 0:
		return pmdState{}, nil
	case clientOffer(mode) == "":
		return pmdState{}, fmt.Errorf("extension %s not offered", exts[0].name)
	case len(exts) > 1:
		return pmdState{}, errors.New("more than one extension")
	case !strings.EqualFold(exts[0].name, pmdName):
		return pmdState{}, fmt.Errorf("extension %s not offered", exts[0].name)
	}
	dp, err := parseDeflateParams(exts[0].params, true)
	if err != nil {
		return pmdState{}, err
	}
	if mode == CompressionEnabled && !dp.serverNoTakeover {
		// RFC 7692 §7.1.1.1: a server accepting the offer must echo it.
		return pmdState{}, errors.New(serverNoTakeover + " missing")
	}
	return agreement(dp), nil
}

// agreement returns the client's agreement on a valid answer: our output
// within the server's client_max_window_bits; the server's context taken
// over unless it answered server_no_context_takeover, within its
// server_max_window_bits (RFC 7692 §7.1.2.1 lets it send one unasked).
func agreement(dp deflateParams) pmdState {
	st := pmdState{on: true, outBits: orDefault(dp.clientBits, maxWindowBits)}
	if !dp.serverNoTakeover {
		st.inTakeover = true
		st.win = newWindow(orDefault(dp.serverBits, maxWindowBits))
	}
	return st
}
