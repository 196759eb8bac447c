//go:build unix

package restart_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/restart"
)

// A server's start: it takes the listener of a running old version if
// there is one, serves, tells the old one it is ready, and offers the
// listener in turn for the next version. Here there is no old version:
// Take finds nobody, and the listener is new.
func Example() {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("gale-example-%d.sock", os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var inherited map[string]net.Listener
	t, err := restart.Take(ctx, path)
	if err == nil {
		inherited = t.Listeners
	}
	ln, err := restart.Listen(inherited, "tcp", "127.0.0.1:0", "http")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &httpd.Server{Handler: http.NotFoundHandler()}
	go srv.Serve(ln)
	if t != nil {
		t.Ready() // the old version stops accepting, and drains
	}
	h, err := restart.Offer(path, map[string]net.Listener{"http": ln})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("inherited:", inherited != nil)
	// Serve until the next version has taken over (or, here, at once).
	select {
	case <-h.Taken():
	default:
	}
	h.Close()
	srv.Shutdown(ctx)
	// Output: inherited: false
}

// Systemd's socket activation: a unit's listeners, by the name its
// FileDescriptorName= gives them, or new ones when the process was not
// activated.
func ExampleSystemdNamed() {
	lns, err := restart.SystemdNamed()
	if err != nil {
		fmt.Println(err)
		return
	}
	activated := lns["http"] != nil
	ln, err := restart.Listen(lns, "tcp", "127.0.0.1:0", "http")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	fmt.Println("activated:", activated)
	// Output: activated: false
}

// Listen falls back to a new listener when nothing was inherited under
// the name.
func ExampleListen() {
	ln, err := restart.Listen(nil, "tcp", "127.0.0.1:0", "http")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	fmt.Println(ln.Addr().Network())
	// Output: tcp
}
