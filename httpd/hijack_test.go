package httpd_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// pattern returns n bytes that show where a lost or repeated byte was.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// Hijack hands over every byte the client sent after the head, in order:
// the body's unread part, what the loop held, what is still to come. The
// handler reads part of a 1 MiB body first, as net/http allows.
func TestHijackUploadWhole(t *testing.T) { backendtest.Run(t, testHijackUploadWhole) }

func testHijackUploadWhole(t *testing.T) {
	for _, size := range []int{1 << 20, 3000} {
		testHijackUpload(t, size)
	}
}

// testHijackUpload hijacks a body of size bytes, the small one once it
// has all come.
func testHijackUpload(t *testing.T, size int) {
	const readFirst = 1000
	want := pattern(size)
	result := make(chan error, 1)
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if size < 1<<16 {
			time.Sleep(50 * time.Millisecond) // the loop takes the whole body
		}
		result <- hijackAndCheck(w, r, want, readFirst, false)
	}))
	c, br := rawConn(t, addr)
	go func() {
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
		c.Write(want)
		io.WriteString(c, "END\n")
	}()
	if err := waitResult(result); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); line != "done\n" {
		t.Fatalf("hijacked connection answered %q, %v", line, err)
	}
}

// A chunked body that the handler has not read comes out of the hijacked
// connection as a chunked stream of the same data, then what follows it.
func TestHijackChunkedWhole(t *testing.T) { backendtest.Run(t, testHijackChunkedWhole) }

func testHijackChunkedWhole(t *testing.T) {
	for _, size := range []int{1 << 20, 9000} {
		testHijackChunked(t, size)
	}
}

// testHijackChunked hijacks a chunked body of size bytes, the small one
// once it has all come, trailer included.
func testHijackChunked(t *testing.T, size int) {
	want := pattern(size)
	result := make(chan error, 1)
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if size < 1<<16 {
			time.Sleep(50 * time.Millisecond) // the loop takes the whole body
		}
		result <- hijackAndCheck(w, r, want, 0, true)
	}))
	c, br := rawConn(t, addr)
	go func() {
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		for p := want; len(p) > 0; {
			n := min(len(p), 3000)
			fmt.Fprintf(c, "%x\r\n%s\r\n", n, p[:n])
			p = p[n:]
		}
		io.WriteString(c, "0\r\nX-Sum: 1\r\n\r\nEND\n")
	}()
	if err := waitResult(result); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); line != "done\n" {
		t.Fatalf("hijacked connection answered %q, %v", line, err)
	}
}

// hijackAndCheck reads skip bytes of r's body, hijacks, and checks that
// the rest of the body (de-chunked when chunked, its trailer skipped)
// and then "END\n" come out of the hijacked connection; it answers
// "done\n" on it.
func hijackAndCheck(w http.ResponseWriter, r *http.Request, want []byte, skip int, chunked bool) error {
	first := make([]byte, skip)
	if _, err := io.ReadFull(r.Body, first); err != nil {
		return fmt.Errorf("reading the body's start: %v", err)
	}
	nc, brw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	var rest []byte
	if chunked {
		rest, err = io.ReadAll(httputil.NewChunkedReader(brw.Reader))
		if err == nil {
			_, err = textprotoSkipTrailer(brw.Reader)
		}
	} else {
		rest = make([]byte, len(want)-skip)
		_, err = io.ReadFull(brw, rest)
	}
	if err != nil {
		return fmt.Errorf("reading the rest of the body from the hijacked connection: %v (%d bytes)", err, len(rest))
	}
	got := append(first, rest...)
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		return fmt.Errorf("hijacked body: %d bytes, want %d; first difference at %d", len(got), len(want), i)
	}
	if line, err := brw.ReadString('\n'); line != "END\n" {
		return fmt.Errorf("after the body: %q, %v; want END", line, err)
	}
	brw.WriteString("done\n")
	return brw.Flush()
}

// textprotoSkipTrailer reads a chunked body's trailer up to its blank
// line.
func textprotoSkipTrailer(br *bufio.Reader) (int, error) {
	n := 0
	for {
		line, err := br.ReadString('\n')
		n += len(line)
		if err != nil || strings.TrimRight(line, "\r\n") == "" {
			return n, err
		}
	}
}

// waitResult returns what the handler sends on result, or a timeout.
func waitResult(result chan error) error {
	select {
	case err := <-result:
		return err
	case <-time.After(20 * time.Second):
		return fmt.Errorf("the handler did not end within 20s")
	}
}
