package httpd_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
)

// A head that trickles in is held, unparsed and without a goroutine, until
// ReadHeaderTimeout closes its connection.
func TestSlowlorisHeadTimesOut(t *testing.T) { backendtest.Run(t, testSlowlorisHeadTimesOut) }

func testSlowlorisHeadTimesOut(t *testing.T) {
	addr := start(t, &httpd.Server{ReadHeaderTimeout: 200 * time.Millisecond}, echoHandler())
	c, br := rawConn(t, addr)
	t0 := time.Now()
	for _, b := range []byte("GET / HTTP/1.1\r\nHo") {
		if _, err := c.Write([]byte{b}); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err := br.ReadByte()
	if err != io.EOF && !isReset(err) {
		t.Fatalf("read: %v, want the connection closed", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("closed after %v, want about 200ms", d)
	}
}

// A head longer than MaxHeaderBytes (plus net/http's 4 KiB of slack) is
// answered 431 and its connection closed: the server holds no more.
func TestHeadTooLarge(t *testing.T) { backendtest.Run(t, testHeadTooLarge) }

func testHeadTooLarge(t *testing.T) {
	addr := start(t, &httpd.Server{MaxHeaderBytes: 1024}, echoHandler())
	c, br := rawConn(t, addr)
	go func() {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		for i := 0; i < 1000; i++ {
			if _, err := fmt.Fprintf(c, "X-Pad-%d: %s\r\n", i, strings.Repeat("p", 100)); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !resp.Close {
		t.Fatalf("got %v, %v; want 431 and close", resp, err)
	}
}

// A client that never reads its response holds its handler in Write once
// the connection's queue is full: the server buffers a bounded amount,
// not the response.
func TestNeverReadingClient(t *testing.T) { backendtest.Run(t, testNeverReadingClient) }

func testNeverReadingClient(t *testing.T) {
	var written atomic.Int64
	done := make(chan error, 1)
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for i := 0; i < 1024; i++ { // 64 MiB
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
			written.Add(int64(len(chunk)))
		}
		done <- nil
	}))
	c, _ := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(300 * time.Millisecond)
	// Loopback socket buffers take a few MiB; the server's own queue at
	// most 256 KiB more.
	if n := written.Load(); n >= 32<<20 {
		t.Fatalf("the handler wrote %d MiB to a client that reads nothing", n>>20)
	}
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the handler's writes all succeeded after the client left")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler is still blocked after the client left")
	}
}

// An upload to a handler that reads slowly is held back: the loop stops
// reading once BodyBufferSize bytes wait, so the client's writes block.
// Once released, the handler reads the whole body. Each wait is bounded
// by progress (uploadStall without a byte moving), not by the time the
// 64 MiB take, which a busy machine stretches.
func TestUploadBackpressure(t *testing.T) { backendtest.Run(t, testUploadBackpressure) }

// uploadStall bounds how long TestUploadBackpressure's upload may go
// without a byte moving once the handler reads.
const uploadStall = 10 * time.Second

// uploadResult is what a handler read of an upload.
type uploadResult struct {
	n   int64
	err error
}

// awaitMoving waits for the result on got while the count sent moves;
// it reports false once sent has stood still for uploadStall.
func awaitMoving(got chan uploadResult, sent *atomic.Int64) (uploadResult, bool) {
	last, moved := int64(-1), time.Now()
	for time.Since(moved) <= uploadStall {
		select {
		case r := <-got:
			return r, true
		case <-time.After(100 * time.Millisecond):
		}
		if n := sent.Load(); n != last {
			last, moved = n, time.Now()
		}
	}
	return uploadResult{}, false
}

func testUploadBackpressure(t *testing.T) {
	release := make(chan struct{})
	got := make(chan uploadResult, 1)
	addr := start(t, &httpd.Server{BodyBufferSize: 16 << 10}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 1)
		r.Body.Read(b)
		<-release
		n, err := io.Copy(io.Discard, r.Body)
		got <- uploadResult{n + 1, err}
	}))
	c, br := rawConn(t, addr)
	const size = 64 << 20
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
	var sent atomic.Int64
	var werr atomic.Pointer[error]
	go func() {
		chunk := make([]byte, 64<<10)
		for sent.Load() < size {
			c.SetWriteDeadline(time.Now().Add(uploadStall))
			n, err := c.Write(chunk[:min(len(chunk), size-int(sent.Load()))])
			sent.Add(int64(n))
			if err != nil {
				werr.Store(&err)
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	if n := sent.Load(); n >= 32<<20 {
		t.Fatalf("the client sent %d MiB to a handler that reads nothing", n>>20)
	}
	close(release)
	r, ok := awaitMoving(got, &sent)
	if !ok {
		err := werr.Load()
		if err == nil {
			err = new(error)
		}
		t.Fatalf("the handler's read has not returned, and the upload has stood still for %v: the client sent %d of %d bytes, write error %v",
			uploadStall, sent.Load(), size, *err)
	}
	if r.n != size || r.err != nil {
		t.Fatalf("the handler read %d bytes, %v; want %d, nil", r.n, r.err, size)
	}
	c.SetReadDeadline(time.Now().Add(uploadStall))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("got %v, %v", resp, err)
	}
}

func TestMaxBodyBytes(t *testing.T) { backendtest.Run(t, testMaxBodyBytes) }

func testMaxBodyBytes(t *testing.T) {
	addr := start(t, &httpd.Server{MaxBodyBytes: 1000}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			t.Errorf("read: %v, want *http.MaxBytesError", err)
		}
		http.Error(w, "too big", http.StatusRequestEntityTooLarge)
	}))
	c, br := rawConn(t, addr)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n%s", strings.Repeat("b", 5000))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Fatalf("got %+v, %v; want 413 and close", resp, err)
	}
}

// A client that sends its request and half-closes still gets the
// response.
func TestHalfClose(t *testing.T) { backendtest.Run(t, testHalfClose) }

func testHalfClose(t *testing.T) {
	addr := start(t, nil, echoHandler())
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
	c.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "POST /echo 2:hi trailer=map[]" {
		t.Fatalf("got %q", b)
	}
}

// A body cut short by the client's close ends the handler's read with
// io.ErrUnexpectedEOF.
func TestBodyCutShort(t *testing.T) { backendtest.Run(t, testBodyCutShort) }

func testBodyCutShort(t *testing.T) {
	errc := make(chan error, 1)
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		errc <- err
	}))
	c, _ := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort")
	c.(*net.TCPConn).CloseWrite()
	if err := <-errc; err != io.ErrUnexpectedEOF {
		t.Fatalf("read: %v, want io.ErrUnexpectedEOF", err)
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// ReadTimeout bounds a whole request: a body that trickles past it fails
// the handler's read with a timeout, however steadily bytes arrive.
func TestReadTimeoutBoundsBody(t *testing.T) { backendtest.Run(t, testReadTimeoutBoundsBody) }

func testReadTimeoutBoundsBody(t *testing.T) {
	errc := make(chan error, 1)
	addr := start(t, &httpd.Server{ReadTimeout: 300 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		errc <- err
	}))
	c, _ := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < 1000; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, errDeadline) {
			t.Fatalf("read: %v, want a timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the body read outlasted ReadTimeout")
	}
}
