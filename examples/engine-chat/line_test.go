package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNextLine(t *testing.T) {
	const max = 5
	for _, tc := range []struct {
		in      string
		line    string
		n       int
		tooLong bool
	}{
		{in: ""},
		{in: "abc"},
		{in: "abc\n", line: "abc", n: 4},
		{in: "abc\r\n", line: "abc", n: 5},
		{in: "abc\r", line: "", n: 0},
		{in: "\n", line: "", n: 1},
		{in: "\r\n", line: "", n: 2},
		{in: "a\r\rb\n", line: "a\r\rb", n: 5},
		{in: "a\nb\n", line: "a", n: 2},
		{in: "abcde\n", line: "abcde", n: 6},
		{in: "abcde\r\n", line: "abcde", n: 7},
		{in: "abcde"},
		{in: "abcde\r"},                 // still a line of max bytes if "\n" follows
		{in: "abcdef", tooLong: true},   // max+1 bytes, not "\r"
		{in: "abcde\rx", tooLong: true}, // max+2 bytes without "\n"
		{in: "abcdef\n", line: "abcdef", n: 7, tooLong: true},
		{in: "abcde\r\r\n", tooLong: true}, // the "\n" is past max+2: not looked for
		{in: strings.Repeat("x", 1<<16), tooLong: true},
	} {
		line, n, tooLong := nextLine([]byte(tc.in), max)
		if tooLong != tc.tooLong || (!tooLong && (string(line) != tc.line || n != tc.n)) {
			t.Errorf("nextLine(%.20q, %d) = %q, %d, %v; want %q, %d, %v", tc.in, max, line, n, tooLong, tc.line, tc.n, tc.tooLong)
		}
	}
}

func TestValidNick(t *testing.T) {
	for _, tc := range []struct {
		nick string
		ok   bool
	}{
		{"alice", true},
		{"Bob_42", true},
		{"zoë", true},
		{"*", true},
		{"a/b", true},
		{strings.Repeat("é", maxNick), true},
		{strings.Repeat("é", maxNick+1), false},
		{"", false},
		{"a b", false},
		{"a:b", false},
		{"/who", false},
		{"a\tb", false},
		{"\x1b[2J", false},
		{"a\x7f", false},
		{"\u00a0", false}, // no-break space: not printable for unicode.IsPrint
		{"\u200b", false}, // zero-width space
		{"\xff", false},
	} {
		if ok := validNick([]byte(tc.nick)); ok != tc.ok {
			t.Errorf("validNick(%q) = %v, want %v", tc.nick, ok, tc.ok)
		}
	}
}

func TestAppendClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello, world", "hello, world"},
		{"tab\there", "tab\there"},
		{"\x1b[2Jclear", "?[2Jclear"},
		{"a\rb\x00c\x7f", "a?b?c?"},
		{"zoë", "zoë"},
	} {
		if got := appendClean([]byte("> "), []byte(tc.in)); string(got) != "> "+tc.want {
			t.Errorf("appendClean(%q, %q) = %q, want %q", "> ", tc.in, got, "> "+tc.want)
		}
	}
}

// FuzzNextLine checks nextLine against a plain split: the lines it
// returns from a stream, however it is cut into reads, are the stream's
// lines up to the first too long one, where it stops.
func FuzzNextLine(f *testing.F) {
	f.Add([]byte("alice\r\nhi\n\n/who\n"), uint8(3))
	f.Add([]byte("abcdefgh\r\nx"), uint8(1))
	f.Add([]byte("\r\r\n\r\n"), uint8(0))
	const max = 6
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		var want []string
		long := false
		for _, l := range strings.SplitAfter(string(stream), "\n") {
			if !strings.HasSuffix(l, "\n") {
				long = len(l) > max+1 || (len(l) == max+1 && l[max] != '\r')
				break
			}
			l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
			if len(l) > max {
				long = true
				break
			}
			want = append(want, l)
		}
		// Feed the stream in reads of cut+1 bytes, as OnData would see it.
		var got []string
		var pending []byte
		gotLong := false
		for rest := stream; len(rest) > 0 && !gotLong; {
			k := min(len(rest), int(cut)+1)
			pending, rest = append(pending, rest[:k]...), rest[k:]
			for {
				line, n, tooLong := nextLine(pending, max)
				if tooLong {
					gotLong = true
					break
				}
				if n == 0 {
					break
				}
				got = append(got, string(line))
				pending = pending[n:]
			}
			if !gotLong && len(pending) > max+1 {
				t.Fatalf("%d bytes pending without a line or an error, max %d", len(pending), max)
			}
		}
		if !slices.Equal(got, want) || gotLong != long {
			t.Fatalf("lines %q, too long %v; want %q, %v", got, gotLong, want, long)
		}
	})
}

// FuzzValidNick checks that a valid nickname is 1 to maxNick runes of
// UTF-8 and cannot pass for a server line, a command or a chat line's
// start.
func FuzzValidNick(f *testing.F) {
	for _, s := range []string{"alice", "a b", "é", "a:b", "/x", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !validNick(b) {
			return
		}
		if n := utf8.RuneCount(b); !utf8.Valid(b) || n < 1 || n > maxNick ||
			bytes.ContainsAny(b, " :\n\r\t") || b[0] == '/' || !bytes.Equal(appendClean(nil, b), b) {
			t.Errorf("validNick(%q) = true", b)
		}
	})
}
