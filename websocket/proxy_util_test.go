package websocket_test

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
)

// connectProxy is a loopback HTTP proxy that serves CONNECT only, as a
// tunnel to the host asked for; it wants Basic credentials when user is
// set.
type connectProxy struct {
	ln         net.Listener
	user, pass string

	mu      sync.Mutex
	conns   map[net.Conn]bool // open, on either side: closed by stop
	targets []string          // the tunnels' hosts, in order
	wg      sync.WaitGroup
}

// serveProxy starts a connectProxy wanting user and pass (none when user
// is ""), and returns its URL (without credentials) and its stop, which
// closes it and its tunnels and waits for their goroutines.
func serveProxy(user, pass string) (*connectProxy, *url.URL, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	p := &connectProxy{ln: ln, user: user, pass: pass, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, &url.URL{Scheme: "http", Host: ln.Addr().String()}, p.stop
}

func (p *connectProxy) serve() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(nc) {
			return
		}
		p.wg.Add(1)
		go p.tunnel(nc)
	}
}

// track notes nc as open, unless the proxy stopped.
func (p *connectProxy) track(nc net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		nc.Close()
		return false
	}
	p.conns[nc] = true
	return true
}

func (p *connectProxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	for nc := range p.conns {
		nc.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// tunnel answers the CONNECT on nc and relays its bytes to the host it
// names and back.
func (p *connectProxy) tunnel(nc net.Conn) {
	defer p.wg.Done()
	defer nc.Close()
	br := bufio.NewReader(nc)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	switch {
	case req.Method != http.MethodConnect:
		io.WriteString(nc, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	case p.user != "" && req.Header.Get("Proxy-Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pass)):
		io.WriteString(nc, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 5\r\n\r\nwho?\n")
		return
	}
	up, err := net.Dial("tcp", req.Host)
	if err != nil {
		io.WriteString(nc, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	if !p.track(up) {
		return
	}
	defer up.Close()
	p.mu.Lock()
	p.targets = append(p.targets, req.Host)
	p.mu.Unlock()
	io.WriteString(nc, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() {
		io.Copy(up, br)
		up.Close()
		close(done)
	}()
	io.Copy(nc, up)
	nc.Close()
	<-done
}

// tunnels returns the hosts the proxy opened tunnels to.
func (p *connectProxy) tunnels() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}
