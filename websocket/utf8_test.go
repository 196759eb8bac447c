package websocket

import (
	"testing"
	"unicode/utf8"
)

// TestUTF8Incremental checks feed against utf8.Valid for every way of
// cutting a set of tricky strings in two and three pieces: the verdict on
// the whole must match, and an invalid prefix must be refused no later
// than the piece that makes it so.
func TestUTF8Incremental(t *testing.T) {
	cases := []string{
		"", "a", "héllo", "κόσμε", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xef\xbf\xbf",
		"\xed\x9f\xbf", "\xee\x80\x80", "\xc2\x80", "\xe0\xa0\x80",
		// invalid
		"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf5", "\x80",
		"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited", "\xf0\x90\x80",
		"ab\xe0", "\xc2", "\xf8\x88\x80\x80\x80", "\xfe", "\xff",
	}
	for _, s := range cases {
		want := utf8.ValidString(s)
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j++ {
				var st utf8State
				ok := st.feed([]byte(s[:i])) && st.feed([]byte(s[i:j])) && st.feed([]byte(s[j:])) && st.done()
				if ok != want {
					t.Errorf("feed(%q | %q | %q) = %v, want %v", s[:i], s[i:j], s[j:], ok, want)
				}
			}
		}
	}
}

// TestUTF8FailFast checks that a prefix no valid string can begin with is
// refused at once.
func TestUTF8FailFast(t *testing.T) {
	for _, p := range []string{"\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90", "\xed\xa0", "\xe0\x80", "\xc0", "ok\xf5"} {
		var st utf8State
		if st.feed([]byte(p)) {
			t.Errorf("feed(%q) = true, want false at once", p)
		}
	}
}

func FuzzUTF8(f *testing.F) {
	f.Add([]byte("héllo\xed\xa0\x80"), 3)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		if cut < 0 || cut > len(b) {
			cut = len(b) / 2
		}
		var st utf8State
		got := st.feed(b[:cut]) && st.feed(b[cut:]) && st.done()
		if want := utf8.Valid(b); got != want {
			t.Fatalf("feed(%q at %d) = %v, want %v", b, cut, got, want)
		}
	})
}
