package backend_test

import (
	"flag"
	"fmt"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/netconn"
)

// Every package with loops takes the same Kind in its options.
func Example() {
	eo := engine.Options{Backend: backend.IOURing} // engine, httpd, websocket
	ac := aio.Config{Backend: backend.Epoll}
	lc := netconn.ListenConfig{} // the zero value: Auto
	fmt.Println(eo.Backend, ac.Backend, lc.Backend)
	// Output: io_uring epoll auto
}

// A Kind is a flag (or a field of a JSON or YAML configuration) through
// its text methods.
func ExampleKind_UnmarshalText() {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var k backend.Kind
	fs.TextVar(&k, "backend", backend.Auto, "event loop backend: auto, epoll, io_uring, kqueue or net")
	if err := fs.Parse([]string{"-backend=io_uring"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(k)
	// Output: io_uring
}

func ExampleParse() {
	for _, s := range []string{"epoll", "IOURING", "select"} {
		k, err := backend.Parse(s)
		fmt.Println(k, err)
	}
	// Output:
	// epoll <nil>
	// io_uring <nil>
	// auto backend: unknown backend "select" (want auto, epoll, io_uring, kqueue, net or iocp)
}
