//go:build unix

package httpd_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tooltest"
)

// ssePage opens an EventSource on /events and reports what it gets to
// /report, one after the other: each message's data, type and
// lastEventId.
const ssePage = `<html><body><script>
const es = new EventSource("/events");
let reported = Promise.resolve();
const report = (e) => { reported = reported.then(() => fetch("/report?data=" + encodeURIComponent(e.data) +
	"&type=" + e.type + "&id=" + encodeURIComponent(e.lastEventId))); };
es.onmessage = report;
es.addEventListener("named", (e) => { report(e); es.close(); });
</script></body></html>`

// TestSSEChromium: a browser's EventSource reads the events of a stream
// held on the loop; when the stream closes, it reconnects after the
// stream's retry time with the last ID it saw (Last-Event-ID), and the
// next stream goes on from there. When the page closes its EventSource,
// the stream's Done closes.
func TestSSEChromium(t *testing.T) {
	chromium := tooltest.Need(t, "chromium", "the event stream's client")
	backendtest.Run(t, func(t *testing.T) {
		streams := make(chan *httpd.Stream, 4)
		reports := make(chan string, 8)
		mux := http.NewServeMux()
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, ssePage) })
		mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			reports <- q.Get("type") + " " + q.Get("id") + " " + q.Get("data")
		})
		mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
			s, err := httpd.EventStream(w, r, httpd.EventStreamOptions{Retry: 100 * time.Millisecond})
			if err != nil {
				t.Errorf("EventStream: %v", err)
				return
			}
			streams <- s
			if s.LastEventID() == "" {
				s.Send(httpd.Event{ID: "1", Data: "first\nline"})
				s.Close()
				return
			}
			s.Send(httpd.Event{ID: "2", Data: "after " + s.LastEventID()})
			s.Send(httpd.Event{Event: "named", Data: "last"})
		})
		addr := start(t, nil, mux)
		_, port, _ := net.SplitHostPort(addr)

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir="+filepath.Join(backendtest.TempDir(t), "profile"),
			"http://127.0.0.1:"+port+"/")
		// Chromium's helpers are its process group: they go with it, before
		// the profile's directory is removed.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			cancel()
			cmd.Wait()
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}()
		for _, want := range []string{"message 1 first\nline", "message 2 after 1", "named 2 last"} {
			select {
			case got := <-reports:
				if got != want {
					t.Fatalf("the page reported %q, want %q", got, want)
				}
			case <-ctx.Done():
				t.Fatalf("no report %q from the page", want)
			}
		}
		first, second := <-streams, <-streams
		<-first.Done()
		select {
		case <-second.Done():
			t.Logf("the closed EventSource's stream ended: %v", second.Err())
		case <-ctx.Done():
			t.Fatal("the stream of the EventSource the page closed did not end")
		}
	})
}
