package websocket_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/tlstest"
	"github.com/galeio/gale/internal/testkit/tooltest"
	"github.com/galeio/gale/websocket"
)

// h2Page opens a WebSocket to its own origin, sends "hello", and reports
// the echo (or the failure) to /report.
const h2Page = `<html><body><script>
const ws = new WebSocket("wss://" + location.host + "/ws");
ws.onopen = () => ws.send("hello");
ws.onmessage = (e) => fetch("/report?got=" + encodeURIComponent(e.data));
ws.onerror = () => fetch("/report?got=error");
</script></body></html>`

// TestChromiumOverHTTP2: headless Chromium, on an HTTP/2 connection that
// announces extended CONNECT, opens its WebSocket as a stream of that
// connection (RFC 8441), and the echo comes back through it.
func TestChromiumOverHTTP2(t *testing.T) {
	chromium := tooltest.Need(t, "chromium", "the WebSocket's client")
	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	u := &websocket.Upgrader{Options: websocket.Options{Handler: echoHandler{}, Engine: e}}
	protos, report := make(chan string, 4), make(chan string, 4)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, h2Page) })
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		protos <- r.Proto
		u.Upgrade(w, r, nil)
	})
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) { report <- r.URL.Query().Get("got") })
	srv := &httpd.Server{Handler: mux, ExtendedConnect: true, TLSConfig: tlstest.Get().ServerConfig()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--ignore-certificate-errors",
		"--host-resolver-rules=MAP localhost 127.0.0.1", "https://localhost:"+port+"/")
	cmd.WaitDelay = 5 * time.Second
	inGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
		killGroup(cmd) // its helpers too, before t.TempDir's removal
		time.Sleep(100 * time.Millisecond)
	}()
	select {
	case got := <-report:
		if got != "hello" {
			t.Fatalf("the page got %q", got)
		}
	case <-ctx.Done():
		t.Fatal("no report from the page")
	}
	if p := <-protos; p != "HTTP/2.0" {
		t.Fatalf("the WebSocket's request came over %s, want HTTP/2.0", p)
	}
}
