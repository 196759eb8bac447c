package httpd_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/galeio/gale/httpd"
)

// feed is a live feed's streams: every event goes to all of them,
// encoded once, and each stream leaves the feed as it ends (OnClose),
// with no goroutine waiting for it.
type feed struct {
	mu      sync.Mutex
	streams map[*httpd.Stream]bool
	last    int // the last event's ID
}

func (f *feed) add(s *httpd.Stream) {
	f.mu.Lock()
	f.streams[s] = true
	f.mu.Unlock()
}

func (f *feed) remove(s *httpd.Stream, _ error) {
	f.mu.Lock()
	delete(f.streams, s)
	f.mu.Unlock()
}

// publish sends data to every stream of the feed, and returns to how
// many it went.
func (f *feed) publish(data string) int {
	f.mu.Lock()
	f.last++
	ev := httpd.Event{ID: strconv.Itoa(f.last), Data: data}
	streams := make([]*httpd.Stream, 0, len(f.streams))
	for s := range f.streams {
		streams = append(streams, s)
	}
	f.mu.Unlock()
	return httpd.Broadcast(streams, ev)
}

// A handler opens an event stream and returns: on a loop-served HTTP/1.x
// connection, the stream then lives on the connection's loop, with no
// goroutine, until it ends. (Over HTTP/2 the handler holds it, in
// Serve.) A reconnecting browser says which event it saw last
// (LastEventID), for the handler to resume from.
func ExampleEventStream() {
	f := &feed{streams: make(map[*httpd.Stream]bool)}
	opened := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		s, err := httpd.EventStream(w, r, httpd.EventStreamOptions{
			Heartbeat: 30 * time.Second, // a comment line, against proxies' idle timeouts
			OnClose:   f.remove,
		})
		if err != nil {
			return
		}
		f.add(s)
		opened <- s.LastEventID() // replay what came after it, here
		s.Serve()                 // returns at once, unless the handler must hold the stream
	})
	srv := &httpd.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)

	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/events", nil)
	req.Header.Set("Last-Event-ID", "41")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"), "after", <-opened)
	fmt.Println("published to", f.publish("one line\nand another"))

	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil || line == "\n" {
			break
		}
		fmt.Print(line)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx) // closes the stream, after what it queued
	// Output:
	// text/event-stream after 41
	// published to 1
	// id: 1
	// data: one line
	// data: and another
}
