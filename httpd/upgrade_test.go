package httpd_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// upper is a Protocol that answers each byte it reads in upper case, and
// reports its close.
type upper struct {
	closed chan error
}

func (p *upper) OnOpen(c *engine.Conn) { c.Write([]byte("open:")) }
func (p *upper) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	c.Write([]byte(strings.ToUpper(string(in.Bytes()))))
	in.Discard(in.Len())
	return engine.None
}
func (p *upper) OnDeadline(*engine.Conn, error) engine.Action { return engine.Close }
func (p *upper) OnClose(_ *engine.Conn, err error)            { p.closed <- err }

// upgradeHandler switches to p with "Upgrade: upper".
func upgradeHandler(p httpd.Protocol, result chan<- error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "upper")
		w.Header().Set("Connection", "Upgrade")
		_, err := httpd.Upgrade(w, p)
		result <- err
	})
}

// TestUpgrade switches a connection to another protocol: the 101 goes
// first with the handler's header, then OnOpen's bytes, then the
// protocol answers what the client sent, including the bytes it sent
// right behind its request (pipelined before the switch). Shutdown then
// waits for the upgraded connection, which Close ends.
func TestUpgrade(t *testing.T) {
	p := &upper{closed: make(chan error, 1)}
	result := make(chan error, 1)
	srv := &httpd.Server{}
	addr, done := listen(t, srv, upgradeHandler(p, result), (*httpd.Server).Serve)
	c, r := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: upper\r\n\r\nearly ")
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "upper" {
		t.Fatalf("response %v, %v; want 101 with the handler's header", resp, err)
	}
	if err := <-result; err != nil {
		t.Fatalf("Upgrade: %v", err)
	}
	io.WriteString(c, "late")
	want := "open:EARLY LATE"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with an upgraded connection open = %v, want it to wait (deadline exceeded)", err)
	}
	srv.Close()
	select {
	case <-p.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the upgraded connection")
	}
	if err := <-done; err != http.ErrServerClosed {
		t.Errorf("Serve = %v, want ErrServerClosed", err)
	}
}

// TestUpgradeRefused: after a response began, and on a ResponseWriter
// that is not the loop's (net/http's), Upgrade refuses.
func TestUpgradeRefused(t *testing.T) {
	result := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, err := httpd.Upgrade(w, &upper{})
		result <- err
	})
	addr := start(t, nil, h)
	if _, err := client(t).Get("http://" + addr + "/"); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err == nil {
		t.Error("Upgrade after WriteHeader succeeded")
	}
	rec := httptest.NewRecorder()
	if _, err := httpd.Upgrade(rec, &upper{}); !errors.Is(err, httpd.ErrNotLoop) {
		t.Errorf("Upgrade(net/http's writer) = %v, want ErrNotLoop", err)
	}
}

// userCtx is a Protocol whose OnOpen sets the connection's Context, as a
// user's may: the slot is the user's, and must not route the protocol.
type userCtx struct{ upper }

func (p *userCtx) OnOpen(c *engine.Conn) {
	c.SetContext("protocol's")
	p.upper.OnOpen(c)
}

// TestUpgradeSetContext: the Context of an upgraded connection is the
// user's. Setting it, from the Protocol's OnOpen or from the handler once
// Upgrade returned, changes neither where the bytes go nor the value,
// which the switch must not overwrite.
func TestUpgradeSetContext(t *testing.T) {
	for _, fromHandler := range []bool{false, true} {
		p := &userCtx{upper{closed: make(chan error, 1)}}
		ecs := make(chan *engine.Conn, 1)
		srv := &httpd.Server{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Upgrade", "upper")
			w.Header().Set("Connection", "Upgrade")
			ec, err := httpd.Upgrade(w, p)
			if err == nil && fromHandler {
				ec.SetContext("handler's")
			}
			ecs <- ec
		})
		addr, done := listen(t, srv, h, (*httpd.Server).Serve)
		c, r := rawConn(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: upper\r\n\r\n")
		if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 101 {
			t.Fatalf("response %v, %v; want 101", resp, err)
		}
		ec := <-ecs
		if ec == nil {
			t.Fatal("Upgrade failed")
		}
		io.WriteString(c, "late")
		want := "open:LATE"
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
			t.Fatalf("fromHandler=%v: read %q, %v; want %q", fromHandler, got, err, want)
		}
		// The handler's SetContext may come before or after OnOpen's;
		// either is the user's, and neither the protocol.
		if v, ok := ec.Context().(string); !ok || !fromHandler && v != "protocol's" {
			t.Errorf("fromHandler=%v: Context() = %v after the switch, want the user's value", fromHandler, ec.Context())
		}
		srv.Close()
		<-p.closed
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("Serve = %v, want ErrServerClosed", err)
		}
	}
}

// pauser is upper that pauses reading as it opens, until the test
// resumes it.
type pauser struct {
	upper
	ec chan *engine.Conn
}

func (p *pauser) OnOpen(c *engine.Conn) {
	c.PauseRead()
	p.ec <- c
	p.upper.OnOpen(c)
}

// TestUpgradePausedInOpen: a protocol that pauses reading in OnOpen stays
// paused, even when the server had paused reading itself while the
// handler ran (bytes came behind the request): the server's own resume,
// at the switch, used to come after OnOpen and undo the protocol's pause.
func TestUpgradePausedInOpen(t *testing.T) {
	p := &pauser{upper: upper{closed: make(chan error, 1)}, ec: make(chan *engine.Conn, 1)}
	result := make(chan error, 1)
	early := make(chan struct{})
	srv := &httpd.Server{}
	up := upgradeHandler(p, result)
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-early
		time.Sleep(50 * time.Millisecond) // the loop reads the early bytes, and pauses
		up.ServeHTTP(w, r)
	}))
	c, r := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: upper\r\n\r\n")
	time.Sleep(20 * time.Millisecond) // the handler runs
	io.WriteString(c, "early ")
	close(early)
	if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("response %v, %v; want 101", resp, err)
	}
	if err := <-result; err != nil {
		t.Fatalf("Upgrade: %v", err)
	}
	ec := <-p.ec
	want := "open:EARLY " // the input held before the switch is delivered
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
	io.WriteString(c, "late")
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := r.Read(got); n > 0 || err == nil {
		t.Fatalf("read %q while the protocol had paused reading", got[:n])
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	ec.ResumeRead()
	if _, err := io.ReadFull(r, got[:4]); err != nil || string(got[:4]) != "LATE" {
		t.Fatalf("after ResumeRead: read %q, %v; want LATE", got[:4], err)
	}
	ec.Close()
}
