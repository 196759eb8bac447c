package backend_test

import (
	"strings"
	"testing"

	"github.com/galeio/gale/backend"
)

func TestNamesRoundTrip(t *testing.T) {
	for _, k := range []backend.Kind{backend.Auto, backend.Epoll, backend.IOURing, backend.Kqueue, backend.Net, backend.IOCP} {
		text, err := k.MarshalText()
		if err != nil {
			t.Fatalf("%v: MarshalText: %v", k, err)
		}
		if string(text) != k.String() {
			t.Errorf("MarshalText %q, String %q", text, k)
		}
		var back backend.Kind
		if err := back.UnmarshalText([]byte(" " + strings.ToUpper(string(text)) + "\n")); err != nil || back != k {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, k)
		}
	}
}

func TestParseAliases(t *testing.T) {
	for s, want := range map[string]backend.Kind{"": backend.Auto, "iouring": backend.IOURing,
		"io-uring": backend.IOURing, "uring": backend.IOURing, "EPOLL": backend.Epoll} {
		if got, err := backend.Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestUnknown(t *testing.T) {
	k := backend.Epoll
	if err := k.UnmarshalText([]byte("select")); err == nil || !strings.Contains(err.Error(), `"select"`) {
		t.Errorf("UnmarshalText(select) = %v, want an error naming it", err)
	}
	if k != backend.Epoll {
		t.Errorf("a failed UnmarshalText changed the Kind to %v", k)
	}
	bad := backend.Kind(9)
	if _, err := bad.MarshalText(); err == nil {
		t.Error("MarshalText of Kind(9) did not fail")
	}
	if bad.String() != "Kind(9)" {
		t.Errorf("String of Kind(9) = %q", bad)
	}
}
