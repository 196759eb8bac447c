package benchrun

import (
	"io"
	"net/http"
	"strconv"
)

// The HTTP servers' paths. Every HTTP server answers them alike; those
// that take an http.Handler are given HTTPHandler, the others (bench's
// fasthttp) do the same in their own API.
const (
	// HelloPath answers a GET with HelloBody, Content-Type text/plain.
	HelloPath = "/"
	// BulkPath answers a GET with BulkBody: 64 KiB,
	// application/octet-stream, with its Content-Length.
	BulkPath = "/64k"
	// UploadPath answers a POST, once it has read the whole body, with
	// the body's length in decimal, Content-Type text/plain.
	UploadPath = "/upload"
)

// HelloBody is HelloPath's answer.
const HelloBody = "Hello, World!"

// The bodies' sizes: http-64k's response and http-upload's request.
const (
	httpBulkSize   = 64 << 10 // BulkBody's length
	httpUploadSize = 1 << 20  // what http-upload POSTs to UploadPath
)

// BulkBody returns BulkPath's answer: 64 KiB of the stream scenario's
// pattern. The slice is shared: callers must not change it.
func BulkBody() []byte { return patternTable[:httpBulkSize:httpBulkSize] }

// bulkLength is BulkBody's Content-Length.
var bulkLength = strconv.Itoa(httpBulkSize)

// HTTPHandler returns the handler of the HTTP servers that take an
// http.Handler (std-http, gale's, bench's nbhttp): HelloPath, BulkPath
// and UploadPath as documented there, 404 elsewhere. It is safe for
// concurrent use, as net/http requires.
func HTTPHandler() http.Handler { return http.HandlerFunc(serveBench) }

func serveBench(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case HelloPath:
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, HelloBody)
	case BulkPath:
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", bulkLength) // else net/http would chunk it
		w.Write(BulkBody())
	case UploadPath:
		serveUpload(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveUpload reads the request's body whole and answers its length.
func serveUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, strconv.FormatInt(n, 10))
}
