package httpd_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// An error response to a request whose body the handler did not read
// reaches the client whole, then the end of the stream: the server
// closes the connection (too much body to discard), and a close with the
// client's bytes unread would reset it, which discards the response the
// client has not read yet. As net/http's closeWriteAndWait, the server
// shuts its side down and reads on, dropping, until the client's end.
func TestErrorResponseDelivered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		srv     func() *httpd.Server
		status  int
		chunked bool
	}{
		{"unread", func() *httpd.Server { return &httpd.Server{} }, http.StatusBadRequest, false},
		{"unread-chunked", func() *httpd.Server { return &httpd.Server{} }, http.StatusBadRequest, true},
		{"max-body-bytes", func() *httpd.Server { return &httpd.Server{MaxBodyBytes: 64 << 10} }, http.StatusRequestEntityTooLarge, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.Run(t, func(t *testing.T) { testErrorResponseDelivered(t, tc.srv(), tc.status, tc.chunked) })
		})
	}
}

// errorBody is the error response's body: large enough that most of it
// is still in flight, in the kernels' buffers, when the server closes.
var errorBody = bytes.Repeat([]byte("e"), 1<<20)

func testErrorResponseDelivered(t *testing.T, srv *httpd.Server, status int, chunked bool) {
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if srv.MaxBodyBytes > 0 {
			var mbe *http.MaxBytesError
			if _, err := io.Copy(io.Discard, r.Body); !errors.As(err, &mbe) {
				t.Errorf("reading past MaxBodyBytes: %v, want a *http.MaxBytesError", err)
			}
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(errorBody)))
		w.WriteHeader(status)
		w.Write(errorBody)
	}))
	for round := range 3 {
		c, br := rawConn(t, addr)
		chunk := make([]byte, 32<<10)
		if chunked {
			io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
			chunk = append(append([]byte("8000\r\n"), chunk...), "\r\n"...)
		} else {
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 1<<30)
		}
		writing := make(chan struct{})
		go func() { // the upload goes on as the response comes
			defer close(writing)
			for {
				if _, err := c.Write(chunk); err != nil {
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("round %d: reading the response: %v", round, err)
		}
		n, err := io.Copy(io.Discard, slowReader{resp.Body})
		if resp.StatusCode != status || n != int64(len(errorBody)) || err != nil {
			t.Fatalf("round %d: %d with %d of %d body bytes, then %v; want %d, the whole body",
				round, resp.StatusCode, n, len(errorBody), err, status)
		}
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("round %d: after the response: %v, want the end of the stream", round, err)
		}
		c.Close() // the server's linger ends; so does the writer
		select {
		case <-writing:
		case <-time.After(10 * time.Second):
			t.Fatal("the upload goes on after the connection closed")
		}
	}
}

// slowReader reads in small pieces with a pause between them, as a
// client on a slower network reads: the response backs up in the
// kernels' buffers.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(20 * time.Microsecond)
	return s.r.Read(p[:min(len(p), 8<<10)])
}
