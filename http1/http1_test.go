package http1_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/galeio/gale/http1"
	"github.com/galeio/gale/httpd"
)

// TestForwards: a program written against http1 serves as before, and
// its values are httpd's.
func TestForwards(t *testing.T) {
	var srv *httpd.Server = &http1.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "still here")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "still here" {
		t.Fatalf("%q", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	if err := <-done; err != http1.ErrServerClosed || http1.ModeMixed != httpd.ModeMixed {
		t.Fatalf("Serve: %v", err)
	}
}
