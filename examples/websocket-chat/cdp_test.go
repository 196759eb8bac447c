//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// This file drives headless Chromium over the Chrome DevTools Protocol:
// JSON commands and answers over a WebSocket, here gale's own client.

// browser is a headless Chromium run by a test.
type browser struct {
	t      *testing.T
	cmd    *exec.Cmd
	log    string // its output's file
	exited chan struct{}
	cdp    *cdp
}

// startBrowser runs chromium (its path) with a fresh profile and a
// DevTools port of its choosing, and connects to it with e's loops. The
// browser is closed when the test ends, and killed if it does not go.
func startBrowser(ctx context.Context, t *testing.T, chromium string, e *engine.Engine) *browser {
	t.Helper()
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	logf, err := os.Create(filepath.Join(dir, "chromium.log"))
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, log: logf.Name(), exited: make(chan struct{})}
	b.cmd = exec.Command(chromium,
		"--headless=new", "--no-sandbox", "--disable-gpu",
		"--remote-debugging-port=0", "--user-data-dir="+profile,
		"--no-first-run", "--no-default-browser-check",
		// Tabs in the background run their timers (the page's
		// reconnection backoff) as those in front do.
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		"about:blank")
	b.cmd.Stdout, b.cmd.Stderr = logf, logf // a file: no copying goroutine
	// Its own process group, so that the end of the test can kill its
	// children too should they outlive it.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = b.cmd.Start()
	logf.Close()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		b.cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(b.close)

	// Chromium writes its port, and its browser target's path, to
	// DevToolsActivePort once it listens.
	var port string
	for port == "" {
		data, _ := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if line, _, ok := strings.Cut(string(data), "\n"); ok {
			port = line
			break
		}
		select {
		case <-b.exited:
			t.Fatalf("chromium exited (%v) before it listened:\n%s", b.cmd.ProcessState, b.tail())
		case <-ctx.Done():
			t.Fatalf("chromium is not listening: %v:\n%s", ctx.Err(), b.tail())
		case <-time.After(20 * time.Millisecond):
		}
	}
	url, err := debuggerURL(ctx, port)
	if err != nil {
		t.Fatal(err)
	}
	b.cdp, err = dialCDP(ctx, e, url)
	if err != nil {
		t.Fatalf("DevTools at %s: %v", url, err)
	}
	return b
}

// debuggerURL asks the DevTools server on port for the browser target's
// WebSocket URL.
func debuggerURL(ctx context.Context, port string) (string, error) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:"+port+"/json/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v struct {
		URL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.URL == "" {
		return "", fmt.Errorf("/json/version: %s, %v, no webSocketDebuggerUrl", resp.Status, err)
	}
	return v.URL, nil
}

// close asks the browser to close, and kills its process group if it
// is still there after a few seconds.
func (b *browser) close() {
	if b.cdp != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		b.cdp.call(ctx, "", "Browser.close", nil, nil)
		cancel()
		b.cdp.conn.CloseNow()
	}
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		b.t.Logf("chromium (pid %d) did not close: killed", b.cmd.Process.Pid)
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
	}
	// Its helpers leave with it; any that did not go now.
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	if b.t.Failed() {
		b.t.Logf("chromium's output ends with:\n%s", b.tail())
	}
}

// tail returns the last lines of the browser's output.
func (b *browser) tail() string {
	f, err := os.Open(b.log)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// tab is a page of the browser, attached to in flat mode: its commands
// go over the browser's connection with its session's id.
type tab struct {
	name    string // for the test's messages
	b       *browser
	target  string
	session string
}

// open opens url in a new tab.
func (b *browser) open(ctx context.Context, url string) (*tab, error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := b.cdp.call(ctx, "", "Target.createTarget", map[string]any{"url": url}, &created); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	err := b.cdp.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, &attached)
	if err != nil {
		return nil, err
	}
	return &tab{b: b, target: created.TargetID, session: attached.SessionID}, nil
}

// close closes the tab.
func (tb *tab) close(ctx context.Context) error {
	return tb.b.cdp.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": tb.target}, nil)
}

// eval evaluates the JavaScript expression expr in the page (awaiting it
// if it is a promise), and decodes its value, as JSON, into out unless
// out is nil.
func (tb *tab) eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	params := map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}
	if err := tb.b.cdp.call(ctx, tb.session, "Runtime.evaluate", params, &r); err != nil {
		return err
	}
	if x := r.Exception; x != nil {
		return fmt.Errorf("%s: %s %s", expr, x.Text, x.Exception.Description)
	}
	if out == nil {
		return nil
	}
	if len(r.Result.Value) == 0 {
		return fmt.Errorf("%s: undefined", expr)
	}
	return json.Unmarshal(r.Result.Value, out)
}

// cdp is a connection to the DevTools server: calls are matched to their
// answers by id; events are ignored.
type cdp struct {
	conn *websocket.Conn

	mu     sync.Mutex
	lastID int64
	calls  map[int64]chan cdpAnswer

	closed   chan struct{} // closed after OnClose
	closeErr error         // OnClose's, set before closed is closed
}

type cdpAnswer struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *cdpError       `json:"error"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *cdpError) Error() string {
	return fmt.Sprintf("DevTools error %d: %s %s", e.Code, e.Message, e.Data)
}

// dialCDP connects to the DevTools WebSocket at url, on e's loops, with
// compression offered (Chromium's DevTools server speaks
// permessage-deflate).
func dialCDP(ctx context.Context, e *engine.Engine, url string) (*cdp, error) {
	c := &cdp{calls: make(map[int64]chan cdpAnswer), closed: make(chan struct{})}
	d := websocket.Dialer{Options: websocket.Options{
		Handler:     c,
		Engine:      e,
		Compression: websocket.CompressionEnabled,
		ReadLimit:   16 << 20,
	}}
	conn, _, err := d.Dial(ctx, url)
	if err != nil {
		return nil, err
	}
	c.conn = conn
	return c, nil
}

func (c *cdp) OnOpen(*websocket.Conn) {}

// OnMessage hands an answer to its call; it never blocks (each call's
// channel has room for its answer).
func (c *cdp) OnMessage(_ *websocket.Conn, _ websocket.MessageType, data []byte) {
	var a cdpAnswer
	if err := json.Unmarshal(data, &a); err != nil || a.ID == 0 {
		return // an event, or not for us
	}
	c.mu.Lock()
	ch := c.calls[a.ID]
	delete(c.calls, a.ID)
	c.mu.Unlock()
	if ch != nil {
		ch <- a // Unmarshal copied Result out of data
	}
}

func (c *cdp) OnClose(_ *websocket.Conn, err error) {
	c.closeErr = err
	close(c.closed)
}

// call sends method with params (nil for none), to the session given or
// to the browser (""), and decodes its answer's result into result
// unless result is nil.
func (c *cdp) call(ctx context.Context, session, method string, params, result any) error {
	ch := make(chan cdpAnswer, 1)
	c.mu.Lock()
	c.lastID++
	id := c.lastID
	c.calls[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		forget()
		return err
	}
	if err := c.conn.WriteMessage(websocket.TextMessage, data); err != nil {
		forget()
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			return fmt.Errorf("%s: %w", method, a.Error)
		}
		if result != nil {
			return json.Unmarshal(a.Result, result)
		}
		return nil
	case <-c.closed:
		return fmt.Errorf("%s: the DevTools connection closed: %w", method, c.closeErr)
	case <-ctx.Done():
		forget()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}
