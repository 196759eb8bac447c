package websocket_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/galeio/gale/websocket"
)

// A Dialer reaches a server through an HTTP proxy: it opens a tunnel with
// CONNECT, sending the proxy URL's user information as Basic credentials,
// and does the handshake (and for wss:// TLS with the server) through it.
// http.ProxyFromEnvironment takes the proxy from HTTP_PROXY, HTTPS_PROXY
// and NO_PROXY, as net/http's clients do; the example names its own.
func ExampleDialer_proxy() {
	target, stop := serveEcho(websocket.Options{})
	defer stop()
	_, proxy, stopProxy := serveProxy("alice", "secret") // a CONNECT proxy on loopback
	defer stopProxy()
	proxy.User = url.UserPassword("alice", "secret")

	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	p := printer{got: make(chan struct{})}
	d := &websocket.Dialer{
		Options: websocket.Options{Handler: p, Engine: e},
		Proxy:   http.ProxyURL(proxy), // or http.ProxyFromEnvironment
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := d.Dial(ctx, target)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status)
	c.WriteMessage(websocket.TextMessage, []byte("hello through the proxy"))
	<-p.got
	c.Close(websocket.StatusNormalClosure, "")
	// Output:
	// 101 Switching Protocols
	// text: hello through the proxy
}
