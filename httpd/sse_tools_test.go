package httpd_test

// Event streams read by external clients: curl -N here, a real
// browser's EventSource in sse_chromium_unix_test.go.

import (
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tooltest"
)

// TestSSECurl: curl -N reads the events, framed, as they come, and ends
// with the stream's Close.
func TestSSECurl(t *testing.T) {
	curl := tooltest.Need(t, "curl", "the event stream's client")
	backendtest.Run(t, func(t *testing.T) {
		got := make(chan *httpd.Stream, 1)
		addr := sseServe(t, nil, httpd.EventStreamOptions{Retry: time.Second}, got)
		go func() {
			s := <-got
			s.Send(httpd.Event{ID: s.LastEventID() + "+1", Event: "greeting", Data: "hello\nworld"})
			s.Send(httpd.Event{Data: "bye"})
			s.Close()
		}()
		out, _ := runTool(t, curl, "-N", "-s", "--max-time", "20", "-H", "Last-Event-ID: 5", "http://"+addr+"/events")
		const want = "retry: 1000\n\nid: 5+1\nevent: greeting\ndata: hello\ndata: world\n\ndata: bye\n\n"
		if out != want {
			t.Errorf("curl -N read %q, want %q", out, want)
		}
	})
}
