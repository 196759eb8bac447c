package benchrun

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckHTTP checks that checkHTTP passes HTTPHandler and fails the
// servers that would make wrk's figures wrong without its noticing.
func TestCheckHTTP(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Handler
		want string // in the error; "" for none
	}{
		{"HTTPHandler", HTTPHandler(), ""},
		{"no keep-alive", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			HTTPHandler().ServeHTTP(w, r)
		}), "no keep-alive"},
		{"short bulk", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == BulkPath {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(BulkBody()[:100])
				return
			}
			HTTPHandler().ServeHTTP(w, r)
		}), "body of 100 bytes"},
		{"upload not read", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == UploadPath {
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, "0")
				return
			}
			HTTPHandler().ServeHTTP(w, r)
		}), "POST /upload"},
		{"wrong type", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, HelloBody)
		}), "Content-Type"},
	} {
		srv := httptest.NewServer(tc.h)
		err := checkHTTP(srv.Listener.Addr().String())
		srv.Close()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: checkHTTP = %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: checkHTTP = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}
