package websocket

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// summary is a pmdState as a comparable value: its window by size.
type summary struct {
	on         bool
	outBits    uint8
	inTakeover bool
	winN       int // 0 without a window
}

func summarize(st pmdState) summary {
	s := summary{on: st.on, outBits: st.outBits, inTakeover: st.inTakeover}
	if st.win != nil {
		s.winN = st.win.n
	}
	return s
}

// The offers of Autobahn's 12.x and 13.x cases (autobahn-python's
// PerMessageDeflateOffer: client_no_context_takeover and
// client_max_window_bits always, then the case's server_ parameters),
// and of browsers.
const (
	offerAutobahn   = "permessage-deflate; client_no_context_takeover; client_max_window_bits"
	offerChrome     = "permessage-deflate; client_max_window_bits"
	offerFirefox    = "permessage-deflate"
	offerOldWebKit  = "x-webkit-deflate-frame"
	offerAutobahnT0 = offerAutobahn + "; server_no_context_takeover"
)

// autobahnOffer returns the offer of Autobahn's 13.x case with
// (requestNoContextTakeover, requestMaxWindowBits) = (noTakeover, bits).
func autobahnOffer(noTakeover bool, bits int) string {
	s := offerAutobahn
	if noTakeover {
		s += "; server_no_context_takeover"
	}
	if bits != 0 {
		s += fmt.Sprintf("; server_max_window_bits=%d", bits)
	}
	return s
}

func TestNegotiateServer(t *testing.T) {
	var (
		off          = summary{}
		plain        = summary{on: true, outBits: 15}
		takeover     = summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 15}
		enabled      = CompressionEnabled
		ctxTakeover  = CompressionContextTakeover
		respCNCT     = "permessage-deflate; client_no_context_takeover"
		respBoth     = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
		fallback13_7 = autobahnOffer(true, 9) + ", " + autobahnOffer(true, 0) + ", " + autobahnOffer(false, 0)
	)
	tests := []struct {
		name     string
		offers   []string
		mode     CompressionMode
		want     summary
		response string
		ok       bool
	}{
		{"disabled", []string{offerChrome}, CompressionDisabled, off, "", false},
		{"disabled autobahn", []string{autobahnOffer(false, 0)}, CompressionDisabled, off, "", false},
		{"no header", nil, enabled, off, "", false},
		{"empty header", []string{""}, enabled, off, "", false},
		{"other extension", []string{offerOldWebKit}, ctxTakeover, off, "", false},

		// Autobahn 12.x and 13.1-13.6, under both modes.
		{"autobahn 12.x/13.1 (F,0)", []string{autobahnOffer(false, 0)}, enabled, plain, respCNCT, true},
		{"autobahn 13.2 (T,0)", []string{autobahnOffer(true, 0)}, enabled, plain, respBoth, true},
		{"autobahn 13.3 (F,9)", []string{autobahnOffer(false, 9)}, enabled, summary{on: true, outBits: 9}, respCNCT + "; server_max_window_bits=9", true},
		{"autobahn 13.4 (F,15)", []string{autobahnOffer(false, 15)}, enabled, plain, respCNCT + "; server_max_window_bits=15", true},
		{"autobahn 13.5 (T,9)", []string{autobahnOffer(true, 9)}, enabled, summary{on: true, outBits: 9}, respBoth + "; server_max_window_bits=9", true},
		{"autobahn 13.6 (T,15)", []string{autobahnOffer(true, 15)}, enabled, plain, respBoth + "; server_max_window_bits=15", true},
		{"autobahn 13.7 fallback", []string{fallback13_7}, enabled, summary{on: true, outBits: 9}, respBoth + "; server_max_window_bits=9", true},
		{"takeover autobahn 13.1 (F,0)", []string{autobahnOffer(false, 0)}, ctxTakeover, plain, respCNCT, true},
		{"takeover autobahn 13.2 (T,0)", []string{autobahnOffer(true, 0)}, ctxTakeover, plain, respBoth, true},
		{"takeover autobahn 13.3 (F,9)", []string{autobahnOffer(false, 9)}, ctxTakeover, summary{on: true, outBits: 9}, respCNCT + "; server_max_window_bits=9", true},
		{"takeover autobahn 13.4 (F,15)", []string{autobahnOffer(false, 15)}, ctxTakeover, plain, respCNCT + "; server_max_window_bits=15", true},
		{"takeover autobahn 13.5 (T,9)", []string{autobahnOffer(true, 9)}, ctxTakeover, summary{on: true, outBits: 9}, respBoth + "; server_max_window_bits=9", true},
		{"takeover autobahn 13.6 (T,15)", []string{autobahnOffer(true, 15)}, ctxTakeover, plain, respBoth + "; server_max_window_bits=15", true},
		{"takeover autobahn 13.7 fallback", []string{fallback13_7}, ctxTakeover, summary{on: true, outBits: 9}, respBoth + "; server_max_window_bits=9", true},

		// Browsers.
		{"chrome", []string{offerChrome}, enabled, plain, respCNCT, true},
		{"chrome takeover", []string{offerChrome}, ctxTakeover, takeover, "permessage-deflate", true},
		{"firefox", []string{offerFirefox}, enabled, plain, respCNCT, true},
		{"firefox takeover", []string{offerFirefox}, ctxTakeover, takeover, "permessage-deflate", true},
		{"old webkit then chrome", []string{offerOldWebKit + ", " + offerChrome}, enabled, plain, respCNCT, true},

		// Window limits and takeover.
		{"client window 10", []string{"permessage-deflate; client_max_window_bits=10"}, ctxTakeover, summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 10}, "permessage-deflate", true},
		{"client window quoted", []string{`permessage-deflate; client_max_window_bits="9"`}, ctxTakeover, summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 9}, "permessage-deflate", true},
		{"client window 8", []string{"permessage-deflate; client_max_window_bits=8"}, ctxTakeover, summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 8}, "permessage-deflate", true},
		{"client window ignored when enabled", []string{"permessage-deflate; client_max_window_bits=10"}, enabled, plain, respCNCT, true},
		{"server window 8", []string{"permessage-deflate; server_max_window_bits=8"}, enabled, summary{on: true, outBits: 8}, respCNCT + "; server_max_window_bits=8", true},
		{"server window quoted", []string{`permessage-deflate; server_max_window_bits="12"`}, enabled, summary{on: true, outBits: 12}, respCNCT + "; server_max_window_bits=12", true},
		{"server window leading zero", []string{"permessage-deflate; server_max_window_bits=09"}, enabled, summary{on: true, outBits: 9}, respCNCT + "; server_max_window_bits=9", true},
		{"whitespace", []string{"  permessage-deflate\t;server_max_window_bits = 10 ;  client_no_context_takeover  "}, enabled, summary{on: true, outBits: 10}, respCNCT + "; server_max_window_bits=10", true},
		{"case-insensitive", []string{"PerMessage-Deflate; Server_No_Context_Takeover"}, enabled, plain, respBoth, true},

		// Declined offers, and falling back to the next one.
		{"unknown parameter", []string{"permessage-deflate; foo"}, enabled, off, "", false},
		{"unknown parameter then good", []string{"permessage-deflate; foo=1, permessage-deflate"}, enabled, plain, respCNCT, true},
		{"duplicate parameter", []string{"permessage-deflate; server_no_context_takeover; server_no_context_takeover"}, enabled, off, "", false},
		{"duplicate client bits", []string{"permessage-deflate; client_max_window_bits; client_max_window_bits=10"}, enabled, off, "", false},
		{"takeover with value", []string{"permessage-deflate; client_no_context_takeover=1"}, enabled, off, "", false},
		{"server bits without value", []string{"permessage-deflate; server_max_window_bits"}, enabled, off, "", false},
		{"server bits 7", []string{"permessage-deflate; server_max_window_bits=7"}, enabled, off, "", false},
		{"server bits 16", []string{"permessage-deflate; server_max_window_bits=16"}, enabled, off, "", false},
		{"server bits 015", []string{"permessage-deflate; server_max_window_bits=015"}, enabled, off, "", false},
		{"server bits +9", []string{"permessage-deflate; server_max_window_bits=+9"}, enabled, off, "", false},
		{"server bits empty quoted", []string{`permessage-deflate; server_max_window_bits=""`}, enabled, off, "", false},
		{"client bits 16", []string{"permessage-deflate; client_max_window_bits=16"}, ctxTakeover, off, "", false},
		{"client bits word", []string{"permessage-deflate; client_max_window_bits=ten"}, ctxTakeover, off, "", false},
		{"bad then good, fallback across headers", []string{"permessage-deflate; server_max_window_bits=99", offerChrome}, enabled, plain, respCNCT, true},
		{"malformed header skipped", []string{`permessage-deflate; x="oops`, offerFirefox}, enabled, plain, respCNCT, true},
		{"malformed header declines its offers", []string{offerFirefox + ", ;"}, enabled, off, "", false},
		{"trailing semicolon", []string{"permessage-deflate;"}, enabled, off, "", false},
		{"empty element", []string{"permessage-deflate,,permessage-deflate"}, enabled, off, "", false},
		{"bad mode", []string{offerFirefox}, CompressionMode(9), off, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, response, ok := negotiateServer(tt.offers, tt.mode)
			if got := summarize(st); got != tt.want || response != tt.response || ok != tt.ok {
				t.Errorf("negotiateServer(%q, %d) = %+v, %q, %v, want %+v, %q, %v",
					tt.offers, tt.mode, got, response, ok, tt.want, tt.response, tt.ok)
			}
		})
	}
}

func TestNegotiateClientOffer(t *testing.T) {
	tests := []struct {
		mode CompressionMode
		want string
	}{
		{CompressionDisabled, ""},
		{CompressionEnabled, "permessage-deflate; server_no_context_takeover; client_max_window_bits"},
		{CompressionContextTakeover, "permessage-deflate; client_max_window_bits"},
		{CompressionMode(9), ""},
	}
	for _, tt := range tests {
		if got := clientOffer(tt.mode); got != tt.want {
			t.Errorf("clientOffer(%d) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}

func TestNegotiateAcceptResponse(t *testing.T) {
	var (
		off         = summary{}
		plain       = summary{on: true, outBits: 15}
		takeover    = summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 15}
		enabled     = CompressionEnabled
		ctxTakeover = CompressionContextTakeover
		snct        = "permessage-deflate; server_no_context_takeover"
	)
	tests := []struct {
		name   string
		values []string
		mode   CompressionMode
		want   summary
		bad    bool
	}{
		{"none", nil, enabled, off, false},
		{"none disabled", nil, CompressionDisabled, off, false},
		{"empty value", []string{""}, enabled, off, false},
		{"blank value", []string{" \t "}, ctxTakeover, off, false},
		{"enabled", []string{snct}, enabled, plain, false},
		{"enabled, both", []string{snct + "; client_no_context_takeover"}, enabled, plain, false},
		{"enabled, client bits", []string{snct + "; client_max_window_bits=9"}, enabled, summary{on: true, outBits: 9}, false},
		{"enabled, server bits", []string{snct + "; server_max_window_bits=10"}, enabled, plain, false},
		{"enabled, snct missing", []string{"permessage-deflate"}, enabled, off, true},
		{"takeover", []string{"permessage-deflate"}, ctxTakeover, takeover, false},
		{"takeover, server bits", []string{"permessage-deflate; server_max_window_bits=10"}, ctxTakeover, summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 10}, false},
		{"takeover, server bits quoted", []string{`permessage-deflate; server_max_window_bits="8"`}, ctxTakeover, summary{on: true, outBits: 15, inTakeover: true, winN: 1 << 8}, false},
		{"takeover declined", []string{snct}, ctxTakeover, plain, false},
		{"takeover, client bits 12", []string{"permessage-deflate; client_max_window_bits=12; client_no_context_takeover"}, ctxTakeover, summary{on: true, outBits: 12, inTakeover: true, winN: 1 << 15}, false},
		{"case-insensitive", []string{"Permessage-Deflate; SERVER_NO_CONTEXT_TAKEOVER"}, enabled, plain, false},
		{"whitespace", []string{" permessage-deflate ;server_no_context_takeover\t"}, enabled, plain, false},

		{"not offered", []string{snct}, CompressionDisabled, off, true},
		{"unknown extension", []string{"x-webkit-deflate-frame"}, ctxTakeover, off, true},
		{"unknown extension disabled", []string{"foo"}, CompressionDisabled, off, true},
		{"two answers", []string{"permessage-deflate, permessage-deflate"}, ctxTakeover, off, true},
		{"two headers", []string{"permessage-deflate", "permessage-deflate"}, ctxTakeover, off, true},
		{"pmd and other", []string{"permessage-deflate", "foo"}, ctxTakeover, off, true},
		{"unknown parameter", []string{"permessage-deflate; foo"}, ctxTakeover, off, true},
		{"duplicate parameter", []string{snct + "; server_no_context_takeover"}, enabled, off, true},
		{"duplicate bits", []string{"permessage-deflate; server_max_window_bits=9; server_max_window_bits=10"}, ctxTakeover, off, true},
		{"client bits without value", []string{snct + "; client_max_window_bits"}, enabled, off, true},
		{"client bits 7", []string{snct + "; client_max_window_bits=7"}, enabled, off, true},
		{"server bits 16", []string{"permessage-deflate; server_max_window_bits=16"}, ctxTakeover, off, true},
		{"server bits without value", []string{"permessage-deflate; server_max_window_bits"}, ctxTakeover, off, true},
		{"takeover with value", []string{"permessage-deflate; server_no_context_takeover=true"}, enabled, off, true},
		{"malformed ;", []string{";"}, enabled, off, true},
		{"malformed ,", []string{","}, enabled, off, true},
		{"malformed trailing ,", []string{snct + ","}, enabled, off, true},
		{"malformed quote", []string{`permessage-deflate; server_max_window_bits="10`}, ctxTakeover, off, true},
		{"malformed quoted non-token", []string{`permessage-deflate; server_max_window_bits="1 0"`}, ctxTakeover, off, true},
		{"malformed =", []string{"permessage-deflate; =10"}, ctxTakeover, off, true},
		{"malformed name", []string{"permessage deflate"}, ctxTakeover, off, true},
		{"malformed second header", []string{"permessage-deflate", "@"}, ctxTakeover, off, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := acceptResponse(tt.values, tt.mode)
			if got := summarize(st); got != tt.want || (err != nil) != tt.bad {
				t.Errorf("acceptResponse(%q, %d) = %+v, %v, want %+v, error %v", tt.values, tt.mode, got, err, tt.want, tt.bad)
			}
			if err != nil && !errors.Is(err, ErrBadHandshake) {
				t.Errorf("acceptResponse(%q, %d) = %v, want an error wrapping ErrBadHandshake", tt.values, tt.mode, err)
			}
		})
	}
}

// TestNegotiateBothEnds runs our client's offer through our server and the
// answer back through our client, for every pair of modes: both must agree
// on compression (or both not), and an end that takes the other's context
// over only when that other keeps it (ours never do, but the agreement
// must still say so consistently).
func TestNegotiateBothEnds(t *testing.T) {
	modes := []CompressionMode{CompressionDisabled, CompressionEnabled, CompressionContextTakeover}
	for _, cm := range modes {
		for _, sm := range modes {
			var headers []string
			if offer := clientOffer(cm); offer != "" {
				headers = append(headers, offer)
			}
			sst, response, ok := negotiateServer(headers, sm)
			var answer []string
			if ok {
				answer = append(answer, response)
			}
			cst, err := acceptResponse(answer, cm)
			if err != nil {
				t.Errorf("client %d, server %d: acceptResponse(%q) = %v, want nil", cm, sm, answer, err)
				continue
			}
			wantOn := cm != CompressionDisabled && sm != CompressionDisabled
			if sst.on != wantOn || cst.on != wantOn {
				t.Errorf("client %d, server %d: on = %v (server), %v (client), want %v", cm, sm, sst.on, cst.on, wantOn)
			}
			// The server takes over the client's context only under
			// CompressionContextTakeover; the client only if it asked for
			// it and the server did not refuse.
			if want := wantOn && sm == CompressionContextTakeover; sst.inTakeover != want {
				t.Errorf("client %d, server %d: server inTakeover = %v, want %v", cm, sm, sst.inTakeover, want)
			}
			if want := wantOn && cm == CompressionContextTakeover; cst.inTakeover != want {
				t.Errorf("client %d, server %d: client inTakeover = %v, want %v", cm, sm, cst.inTakeover, want)
			}
		}
	}
}

func TestNegotiateParseExtensions(t *testing.T) {
	tests := []struct {
		in   string
		want string // extensions as name(p=v,q), space-separated; "error" for an error
	}{
		{"", ""},
		{"   ", ""},
		{"a", "a()"},
		{"a;b;c=1", "a(b,c=1)"},
		{"a ; b = 2 , c", "a(b=2) c()"},
		{"a;b=\"x\\\"y\"", "error"}, // x"y is not a token
		{`a;b="x\y"`, "a(b=xy)"},
		{`a;b="15"`, "a(b=15)"},
		{`a;b=""`, "error"},
		{`a;b="`, "error"},
		{`a;b="x\`, "error"},
		{"a;", "error"},
		{"a;;b", "error"},
		{"a,", "error"},
		{",a", "error"},
		{"a b", "error"},
		{"a;b=", "error"},
		{"a;b=c d", "error"},
		{"a;b=@", "error"},
		{"\x00", "error"},
		{"a\xff", "error"},
		{"a=1", "error"},
	}
	for _, tt := range tests {
		exts, err := parseExtensions(nil, tt.in)
		got := formatExtensions(exts)
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("parseExtensions(%q) = %q (%v), want %q", tt.in, got, err, tt.want)
		}
	}
}

func formatExtensions(exts []extension) string {
	var parts []string
	for _, e := range exts {
		var ps []string
		for _, p := range e.params {
			if p.hasValue {
				ps = append(ps, p.name+"="+p.value)
			} else {
				ps = append(ps, p.name)
			}
		}
		parts = append(parts, e.name+"("+strings.Join(ps, ",")+")")
	}
	return strings.Join(parts, " ")
}
