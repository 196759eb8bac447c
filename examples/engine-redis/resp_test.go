package main

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string // nil: no command
		n    int      // bytes taken; 0: incomplete
		err  string   // protocol error, if any
	}{
		{in: "", n: 0},
		{in: "*1\r\n$4\r\nPING\r\n", args: []string{"PING"}, n: 14},
		{in: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\nrest", args: []string{"GET", "k"}, n: 20},
		{in: "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", args: []string{"SET", "k", ""}, n: 26},
		{in: "*1\r\n$5\r\nPI\r\nG\r\n", args: []string{"PI\r\nG"}, n: 15}, // binary-safe
		{in: "*0\r\n", n: 4},
		{in: "*-1\r\n", n: 5},
		{in: "PING\r\n", args: []string{"PING"}, n: 6},
		{in: "PING\n", args: []string{"PING"}, n: 5},
		{in: "  set \t k  v \r\nGET", args: []string{"set", "k", "v"}, n: 15},
		{in: "\r\n", n: 2},
		{in: "\n", n: 1},
		{in: "PING", n: 0},
		{in: "PING\r", n: 0},
		{in: "*", n: 0},
		{in: "*1", n: 0},
		{in: "*1\r", n: 0},
		{in: "*1\r\n", n: 0},
		{in: "*1\r\n$", n: 0},
		{in: "*1\r\n$4\r\nPI", n: 0},
		{in: "*1\r\n$4\r\nPING", n: 0},
		{in: "*1\r\n$4\r\nPING\r", n: 0},
		{in: "*1\r\n$4\r\nPING\r\n", args: []string{"PING"}, n: 14},
		{in: "*x\r\n", err: "invalid multibulk length"},
		{in: "*1x\r\n", err: "invalid multibulk length"},
		{in: "*\r\n", err: "invalid multibulk length"},
		{in: "*1\rx", err: "invalid multibulk length"},
		{in: "*" + strings.Repeat("1", 30), err: "invalid multibulk length"},
		{in: "*" + strconv.Itoa(maxArgs+1) + "\r\n", err: "invalid multibulk length"},
		{in: "*1\r\nx", err: "expected '$', got 'x'"},
		{in: "*1\r\n$-1\r\n", err: "invalid bulk length"},
		{in: "*1\r\n$x\r\n", err: "invalid bulk length"},
		{in: "*1\r\n$" + strconv.Itoa(maxBulk+1) + "\r\n", err: "invalid bulk length"},
		{in: "*1\r\n$4\r\nPINGxx", err: "expected CRLF after bulk string"},
		{in: strings.Repeat("a", maxInline), err: "too big inline request"},
		{in: strings.Repeat("a", maxInline-1), n: 0},
		{in: strings.Repeat("a", maxInline-1) + "\n", args: []string{strings.Repeat("a", maxInline-1)}, n: maxInline},
	} {
		args, n, err := parseCommand([]byte(tc.in), nil)
		name := fmt.Sprintf("parseCommand(%.40q)", tc.in)
		if tc.err != "" {
			var pe protocolError
			if !errors.As(err, &pe) || string(pe) != tc.err {
				t.Errorf("%s error = %v, want protocol error %q", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s error = %v, want nil", name, err)
			continue
		}
		if n != tc.n {
			t.Errorf("%s n = %d, want %d", name, n, tc.n)
		}
		if got := strs(args); n > 0 && !equal(got, tc.args) {
			t.Errorf("%s args = %q, want %q", name, got, tc.args)
		}
	}
}

func strs(args [][]byte) []string {
	var s []string
	for _, a := range args {
		s = append(s, string(a))
	}
	return s
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// multibulk encodes args as a RESP array of bulk strings.
func multibulk(args ...[]byte) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	return b
}

var parseSeeds = []string{
	"*1\r\n$4\r\nPING\r\n",
	"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n",
	"PING\r\nPING hello\r\nGET k\n",
	"*0\r\n*-1\r\n\r\n",
	"*1\r\n$-1\r\n",
	"*2\r\n$3\r\nGET\r\n",
	"*1\r\nx",
	"*99999999999999999999\r\n",
	"*1\r\n$4\r\nPINGxx",
	"QUIT\r\nPING\r\n",
	"CONFIG GET save\r\nCOMMAND DOCS\r\nfoo a b\r\n",
}

// FuzzParse checks that parseCommand never panics and that what it
// accepts is consistent: the arguments are slices of the input, encoding
// them again parses to the same, and every prefix of a command is
// reported unfinished, never malformed or complete.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		args, n, err := parseCommand(b, nil)
		if err != nil {
			var pe protocolError
			if !errors.As(err, &pe) {
				t.Fatalf("parseCommand(%q) error = %T %v, want a protocolError", b, err, err)
			}
			return
		}
		if n < 0 || n > len(b) {
			t.Fatalf("parseCommand(%q) n = %d, want 0 to %d", b, n, len(b))
		}
		if n == 0 {
			if len(args) != 0 {
				t.Fatalf("parseCommand(%q) = %q with n 0, want no args", b, strs(args))
			}
			return
		}
		for _, a := range args {
			if len(a) > 0 && !within(a, b[:n]) {
				t.Fatalf("parseCommand(%q): arg %q is not a slice of the command", b, a)
			}
		}
		if len(args) > 0 {
			enc := multibulk(args...)
			again, m, err := parseCommand(enc, nil)
			if err != nil || m != len(enc) || !equal(strs(again), strs(args)) {
				t.Fatalf("parseCommand(%q) = %q, %d, %v, want %q, %d, nil", enc, strs(again), m, err, strs(args), len(enc))
			}
		}
		for k := range min(n, 512) {
			if _, m, err := parseCommand(b[:k], nil); m != 0 || err != nil {
				t.Fatalf("parseCommand(%q) (a prefix of %q) n, err = %d, %v, want 0, nil", b[:k], b[:n], m, err)
			}
		}
	})
}

// within reports whether a (not empty) lies within b.
func within(a, b []byte) bool {
	for i := range b {
		if &b[i] == &a[0] {
			return i+len(a) <= len(b)
		}
	}
	return false
}

// feed runs a server over input arriving in chunks, the way the engine
// calls OnData: unconsumed bytes are presented again with the next
// chunk. It returns every reply and whether the connection closed.
func feed(srv *server, chunks ...[]byte) (out []byte, closed bool) {
	var pending []byte
	s := &session{}
	for _, ch := range chunks {
		pending = append(pending, ch...)
		for {
			n, more, quit := srv.exec(pending, s)
			pending = pending[n:]
			out = append(out, s.out...)
			s.out = s.out[:0]
			if quit {
				return out, true
			}
			if !more {
				break
			}
		}
	}
	return out, false
}

// FuzzExec checks that the replies do not depend on how the requests are
// split across reads.
func FuzzExec(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s), uint16(len(s)/2))
		f.Add([]byte(s), uint16(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		k := int(at) % (len(b) + 1)
		whole, wq := feed(newServer(), b)
		split, sq := feed(newServer(), b[:k], b[k:])
		if !bytes.Equal(whole, split) || wq != sq {
			t.Fatalf("replies to %q = %q (closed %v); split at %d: %q (closed %v)", b, whole, wq, k, split, sq)
		}
	})
}

func TestTooBigRequest(t *testing.T) {
	// Two arguments of maxBulk bytes each, the second unfinished: past
	// maxRequest bytes the server gives up.
	head := []byte("*3\r\n$3\r\nSET\r\n$" + strconv.Itoa(maxBulk) + "\r\n")
	arg := append(bytes.Repeat([]byte{'v'}, maxBulk), "\r\n$"+strconv.Itoa(maxBulk)+"\r\n"...)
	want := "-ERR Protocol error: too big request\r\n"
	if out, closed := feed(newServer(), head, arg, arg[:maxRequest-len(head)-len(arg)]); len(out) != 0 || closed {
		t.Fatalf("replies to maxRequest bytes of a command = %q, closed %v, want none, open", out, closed)
	}
	if out, closed := feed(newServer(), head, arg, arg[:maxRequest-len(head)-len(arg)+1]); string(out) != want || !closed {
		t.Fatalf("replies to maxRequest+1 bytes of a command = %q, closed %v, want %q, closed", out, closed, want)
	}
}
