package websocket

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// dialTCP opens the TCP connection to addr, the host of u: directly, or
// through the proxy d.Proxy names, as a tunnel that CONNECT opened. A
// proxy that refuses returns its response with the error. It runs on the
// caller's goroutine, bounded by ctx.
func (d *Dialer) dialTCP(ctx context.Context, u *url.URL, addr string, secure bool) (net.Conn, *http.Response, error) {
	dial := d.NetDialContext
	if dial == nil {
		dial = new(net.Dialer).DialContext
	}
	proxy, err := d.proxyFor(u, secure)
	if err != nil {
		return nil, nil, err
	}
	if proxy == nil {
		nc, err := dial(ctx, "tcp", addr)
		return nc, nil, err
	}
	paddr, err := proxyAddr(proxy)
	if err != nil {
		return nil, nil, err
	}
	nc, err := dial(ctx, "tcp", paddr)
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: proxy: %w", err)
	}
	resp, err := connect(ctx, nc, addr, proxy)
	if err != nil {
		nc.Close()
		return nil, resp, err
	}
	return nc, nil, nil
}

// proxyFor asks d.Proxy for the proxy of a request to u, which it sees
// with the scheme of the HTTP request the handshake is (http for ws://,
// https for wss://), as http.ProxyFromEnvironment expects; nil for none.
func (d *Dialer) proxyFor(u *url.URL, secure bool) (*url.URL, error) {
	if d.Proxy == nil {
		return nil, nil
	}
	ru := *u
	ru.Scheme = "http"
	if secure {
		ru.Scheme = "https"
	}
	req := &http.Request{Method: http.MethodGet, URL: &ru, Header: make(http.Header), Host: u.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	p, err := d.Proxy(req)
	if err != nil {
		return nil, fmt.Errorf("websocket: proxy: %w", err)
	}
	return p, nil
}

// proxyAddr returns an http:// proxy's host:port. Other proxies (https://,
// socks5://) are not supported.
func proxyAddr(p *url.URL) (string, error) {
	if p.Scheme != "http" && p.Scheme != "" {
		return "", fmt.Errorf("websocket: proxy scheme %q: %w", p.Scheme, errors.ErrUnsupported)
	}
	port := p.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(p.Hostname(), port), nil
}

// connect asks the proxy at the other end of nc for a tunnel to addr
// (CONNECT, RFC 9110 §9.3.6), with Basic credentials (RFC 7617) from the
// proxy URL's user information if it has any. A status other than 2xx
// returns the proxy's response (its body not read) and an error saying
// so; so does a response head over maxResponseHead, or bytes past it
// (the origin speaks only once it was spoken to). ctx bounds the
// exchange.
func connect(ctx context.Context, nc net.Conn, addr string, proxy *url.URL) (*http.Response, error) {
	// ctx's end, not its deadline, interrupts the exchange: so its error
	// is the one returned, never the connection's timeout.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	resp, err := exchange(nc, addr, proxy)
	if !stop() {
		return resp, fmt.Errorf("websocket: proxy: %w", ctx.Err())
	}
	return resp, err
}

// exchange writes the CONNECT request for addr and reads the proxy's
// answer.
func exchange(nc net.Conn, addr string, proxy *url.URL) (*http.Response, error) {
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if auth := proxyAuth(proxy); auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	if _, err := io.WriteString(nc, req+"\r\n"); err != nil {
		return nil, fmt.Errorf("websocket: proxy: %w", err)
	}
	lr := &io.LimitedReader{R: nc, N: maxResponseHead}
	br := bufio.NewReader(lr)
	sent := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	resp, err := http.ReadResponse(br, sent)
	switch {
	case err != nil && lr.N == 0:
		return nil, fmt.Errorf("websocket: proxy: response to CONNECT over %d bytes", maxResponseHead)
	case err != nil:
		return nil, fmt.Errorf("websocket: proxy: reading its response to CONNECT: %w", err)
	}
	resp.Body = http.NoBody
	switch {
	case resp.StatusCode/100 != 2:
		return resp, fmt.Errorf("websocket: proxy %s refused CONNECT %s: %s", proxy.Host, addr, resp.Status)
	case br.Buffered() > 0:
		return resp, errors.New("websocket: proxy: bytes after its response to CONNECT")
	}
	return resp, nil
}

// proxyAuth is the Proxy-Authorization of the proxy URL's user
// information: "Basic" and base64 of user:password; "" if it has none.
func proxyAuth(p *url.URL) string {
	if p.User == nil {
		return ""
	}
	pass, _ := p.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pass))
}
