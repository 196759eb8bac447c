package httpd_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
)

// The differential test sends the same raw bytes to net/http's server and
// to this package's, each serving diffEcho on loopback, and compares what
// comes back: the responses (status, header, body; the body is the echo
// of what the handler was given), whether the server closed the
// connection, and, once the client half-closes, what follows. net/http
// is the oracle: where it refuses, this server must refuse with the same
// status; where it serves, the handler must see the same request.
//
// A run goes in two phases. The client writes the input and reads until
// the server closes or nothing comes for a quiet period; then it
// half-closes and reads to the end. The first phase shows what is
// answered while the client waits (pipelined requests, a refused head, a
// body still awaited); the second what a server does with a request cut
// short.

// diffEcho is the handler both servers run. It reports the request as the
// handler sees it, in the header field Echo (so that a HEAD response
// carries it too) and as the body, with an explicit Content-Length so
// that both servers frame it alike. A path starting "/unread" leaves the
// body unread.
func diffEcho(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	fmt.Fprintf(&b, "method=%+q uri=%+q url=%+q proto=%+q(%d.%d) host=%+q",
		r.Method, r.RequestURI, r.URL.String(), r.Proto, r.ProtoMajor, r.ProtoMinor, r.Host)
	fmt.Fprintf(&b, " cl=%d te=%+q close=%v", r.ContentLength, r.TransferEncoding, r.Close)
	echoHeader(&b, "h", r.Header)
	echoHeader(&b, "declared", r.Trailer)
	if !strings.HasPrefix(r.URL.Path, "/unread") {
		body, err := io.ReadAll(r.Body)
		fmt.Fprintf(&b, " body=%s err=%s", echoBody(body), echoErr(err))
		echoHeader(&b, "trailer", r.Trailer)
	}
	rep := b.String()
	w.Header().Set("Echo", rep)
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(rep)))
	io.WriteString(w, rep)
}

func echoHeader(b *strings.Builder, name string, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, " %s[%+q]=[", name, k)
		for i, v := range h[k] {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(echoBody([]byte(v)))
		}
		b.WriteByte(']')
	}
}

// echoBody quotes a body (or a field value), or its length, digest and
// start when long.
func echoBody(p []byte) string {
	if len(p) <= 256 {
		return fmt.Sprintf("%+q", p)
	}
	return fmt.Sprintf("len:%d,sha256:%x,%+q...", len(p), sha256.Sum256(p), p[:64])
}

func echoErr(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%+q", err.Error())
}

// diffServers are the two servers of a differential run: net/http's and
// this package's, on loopback, with the same settings.
type diffServers struct {
	std, gale string // their addresses
}

// startDiffServers starts both servers; they are shut down when tb ends.
func startDiffServers(tb testing.TB) diffServers {
	tb.Helper()
	quiet := log.New(io.Discard, "", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	std := &http.Server{Handler: http.HandlerFunc(diffEcho), ErrorLog: quiet}
	done := make(chan error, 1)
	go func() { done <- std.Serve(ln) }()
	tb.Cleanup(func() {
		std.Close()
		if err := <-done; err != http.ErrServerClosed {
			tb.Errorf("net/http's Serve returned %v", err)
		}
	})
	g := start(tb, &httpd.Server{ErrorLog: quiet}, http.HandlerFunc(diffEcho))
	return diffServers{std: ln.Addr().String(), gale: g}
}

// A diffPace is how long a run waits: quiet is the silence that ends its
// first phase, linger how long the server may take to close once the
// client half-closed (after that it is "hung"), and bound the whole
// exchange.
type diffPace struct {
	quiet, linger, bound time.Duration
}

var (
	testPace = diffPace{quiet: 100 * time.Millisecond, linger: 2 * time.Second, bound: 10 * time.Second}
	// slowPaces are for more tries, one after another, when the first
	// shows a difference not in knownDiffs: a slow machine is not taken
	// for a disagreement. Beside two CPU hogs, the 1 MiB heads of the
	// limit cases (under -race, 16 runs at once) came a second after
	// they were sent, or later.
	slowPaces = []diffPace{
		{quiet: time.Second, linger: 3 * time.Second, bound: 15 * time.Second},
		{quiet: 5 * time.Second, linger: 10 * time.Second, bound: 30 * time.Second},
	}
)

// A diffResult is what one server did with the input. Whether a server
// ended the connection with a FIN or a reset is not compared: it depends
// on whether unread input was left in the socket when it closed, which
// is timing.
type diffResult struct {
	open   []diffReply // the responses read before the client half-closed
	closed bool        // the server ended the connection first
	after  []diffReply // the responses read after the client half-closed
	end    string      // then how the connection ended: "closed" or "hung"
}

// A diffReply is one response, normalized: the Date field is left out
// (gale's 417, as net/http's refusals, has none), and a Connection field
// that says close is "Connection: close".
type diffReply struct {
	status string // "HTTP/1.1 200 OK"
	header string // the fields but Date, sorted, "K: v" separated by " | "
	body   string
	err    string // why the response (or its body) did not parse, if it did not
}

// String renders r for comparison and for messages: what is long (a
// header with an echo of many fields, a body, unparsed bytes) is cut, with
// its length and digest, which keep two that differ apart. A failure
// prints a few kilobytes, not the megabytes of a limit case.
func (r diffReply) String() string {
	if r.err != "" && r.status == "" {
		return "unparsed: " + cut(r.err)
	}
	s := fmt.Sprintf("%s | %s | body %s", r.status, cut(r.header), cutQ([]byte(r.body)))
	if r.err != "" {
		s += " | error: " + cut(r.err)
	}
	return s
}

// cut returns s, or its start, length and digest when it is longer than
// 1 KiB.
func cut(s string) string {
	if len(s) <= 1<<10 {
		return s
	}
	return fmt.Sprintf("%.200s... (%d bytes, sha256 %x)", s, len(s), sha256.Sum256([]byte(s)))
}

// cutQ is cut for bytes, quoted.
func cutQ(b []byte) string {
	if len(b) <= 1<<10 {
		return fmt.Sprintf("%+q", b)
	}
	return fmt.Sprintf("%+.200q... (%d bytes, sha256 %x)", b, len(b), sha256.Sum256(b))
}

func (r *diffResult) String() string {
	var b strings.Builder
	for _, rep := range r.open {
		fmt.Fprintf(&b, "  %v\n", rep)
	}
	if r.closed {
		b.WriteString("  closed by the server\n")
		return b.String()
	}
	b.WriteString("  -- half-closed by the client\n")
	for _, rep := range r.after {
		fmt.Fprintf(&b, "  %v\n", rep)
	}
	fmt.Fprintf(&b, "  end: %s\n", r.end)
	return b.String()
}

// statuses lists the status codes of r's responses, before and after the
// half-close, and how it ended: "400 close", "100 200 | 200 closed".
func (r *diffResult) statuses() string {
	var f []string
	for _, rep := range r.open {
		f = append(f, strings.Fields(rep.status + " ?")[1])
	}
	if r.closed {
		return strings.Join(append(f, "close"), " ")
	}
	f = append(f, "|")
	for _, rep := range r.after {
		f = append(f, strings.Fields(rep.status + " ?")[1])
	}
	return strings.Join(append(f, r.end), " ")
}

// exchange sends in to addr and reads what comes back, in the two phases
// described above; with shut, the client half-closes as soon as it has
// written, and there is no first phase.
func exchange(addr string, in []byte, shut bool, pace diffPace) (*diffResult, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	bound := time.Now().Add(pace.bound)
	c.SetDeadline(bound)
	var wroteAt time.Time
	wrote := make(chan struct{})
	go func() {
		tc.Write(in) // a server that refuses may close before it has all
		if shut {
			tc.CloseWrite()
		}
		wroteAt = time.Now()
		close(wrote)
	}()
	defer func() { c.Close(); <-wrote }()

	r := &diffResult{}
	buf := make([]byte, 64<<10)
	if !shut {
		open, err := readQuiet(c, buf, wrote, &wroteAt, pace.quiet, bound)
		r.open = parseReplies(open)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("no end to the exchange in %v", pace.bound)
		case err != nil:
			r.closed = true
			return r, nil
		}
		tc.CloseWrite()
	}
	c.SetReadDeadline(time.Now().Add(pace.linger))
	var after []byte
	for r.end == "" {
		n, err := c.Read(buf)
		after = append(after, buf[:n]...)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			r.end = "hung"
		case err != nil:
			r.end = "closed" // by a FIN or a reset: see diffResult
		}
	}
	r.after = parseReplies(after)
	return r, nil
}

// readQuiet reads from c until the write is done and nothing has come
// for quiet, and returns what it read, with nil; or with the error that
// ended it first (the server closed, or bound passed).
func readQuiet(c net.Conn, buf []byte, wrote chan struct{}, wroteAt *time.Time, quiet time.Duration, bound time.Time) ([]byte, error) {
	var got []byte
	last, written := time.Now(), false
	for {
		if d := last.Add(quiet); d.Before(bound) {
			c.SetReadDeadline(d)
		} else {
			c.SetReadDeadline(bound)
		}
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if n > 0 {
			last = time.Now()
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || time.Now().After(bound) {
			return got, err
		}
		if !written {
			select {
			case <-wrote:
				written = true
				if wroteAt.After(last) {
					last = *wroteAt
				}
			default:
			}
		}
		if written && time.Since(last) >= quiet {
			return got, nil
		}
	}
}

// parseReplies parses the responses in b. A HEAD response (known by its
// echo) has no body whatever its Content-Length says.
func parseReplies(b []byte) []diffReply {
	var reps []diffReply
	src := bytes.NewReader(b)
	br := bufio.NewReader(src)
	for {
		start := len(b) - src.Len() - br.Buffered()
		if start == len(b) {
			return reps
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return append(reps, diffReply{err: fmt.Sprintf("%v: %s", err, cutQ(b[start:]))})
		}
		rep := diffReply{status: resp.Proto + " " + resp.Status}
		var fields []string
		for k, vv := range resp.Header {
			if k != "Date" {
				for _, v := range vv {
					fields = append(fields, k+": "+v)
				}
			}
		}
		if len(resp.TransferEncoding) > 0 {
			fields = append(fields, "Transfer-Encoding: "+strings.Join(resp.TransferEncoding, ","))
		}
		if resp.Close && resp.ProtoAtLeast(1, 1) {
			fields = append(fields, "Connection: close") // ReadResponse took it out
		}
		slices.Sort(fields)
		rep.header = strings.Join(fields, " | ")
		if !strings.HasPrefix(resp.Header.Get("Echo"), `method="HEAD"`) {
			body, err := io.ReadAll(resp.Body)
			rep.body = string(body)
			if err != nil {
				rep.err = err.Error()
			}
		}
		reps = append(reps, rep)
	}
}

// A diffOutcome is one input's run on both servers.
type diffOutcome struct {
	in        []byte
	shut      bool
	std, gale *diffResult
}

func (o *diffOutcome) same() bool { return o.std.String() == o.gale.String() }

func (o *diffOutcome) String() string {
	how := ""
	if o.shut {
		how = " (then half-closed)"
	}
	return fmt.Sprintf("input %s%s\nnet/http:\n%sgale:\n%s", cutQ(o.in), how, o.std, o.gale)
}

// run sends in to both servers at once, and again at each of slowPaces
// while they differ in a way knownDiffs does not explain (or want, if
// set, is not what they answer).
func (s diffServers) run(in []byte, shut bool, want string, pace diffPace) (*diffOutcome, error) {
	o, err := s.once(in, shut, pace)
	return s.settle(o, err, in, shut, want)
}

// settle runs in again at each of slowPaces while the outcome o, err is
// unsettled, and returns the last.
func (s diffServers) settle(o *diffOutcome, err error, in []byte, shut bool, want string) (*diffOutcome, error) {
	for _, p := range slowPaces {
		if !unsettled(o, err, want) {
			break
		}
		o, err = s.once(in, shut, p)
	}
	return o, err
}

// unsettled reports whether a run's outcome may be the machine's
// slowness: an error (an exchange past its bound), a difference
// knownDiffs does not explain, or statuses other than want.
func unsettled(o *diffOutcome, err error, want string) bool {
	switch {
	case err != nil:
		return true
	case !o.same() && o.known() == nil:
		return true
	}
	return want != "" && (o.std.statuses() != want || o.gale.statuses() != want && o.known() == nil)
}

func (s diffServers) once(in []byte, shut bool, pace diffPace) (*diffOutcome, error) {
	o := &diffOutcome{in: in, shut: shut}
	var wg sync.WaitGroup
	var errStd, errGale error
	wg.Add(2)
	go func() { defer wg.Done(); o.std, errStd = exchange(s.std, in, shut, pace) }()
	go func() { defer wg.Done(); o.gale, errGale = exchange(s.gale, in, shut, pace) }()
	wg.Wait()
	if err := errors.Join(errStd, errGale); err != nil {
		return nil, err
	}
	return o, nil
}

// known returns the known difference o shows, or nil.
func (o *diffOutcome) known() *knownDiff {
	for i := range knownDiffs {
		if k := &knownDiffs[i]; k.match(o) {
			return k
		}
	}
	return nil
}

var failBugs = flag.Bool("diffbugs", false, "fail the differential tests on the known bugs in knownDiffs too")

// judge fails t on a difference in o not in knownDiffs, or on a known bug
// with -diffbugs. It returns the known difference o shows, if any.
func judge(t testing.TB, o *diffOutcome) *knownDiff {
	t.Helper()
	if o.same() {
		return nil
	}
	k := o.known()
	switch {
	case k == nil:
		t.Errorf("net/http and gale differ\n%v", o)
	case k.bug != "" && *failBugs:
		t.Errorf("known bug %s (%s): %s\n%v", k.name, k.bug, k.why, o)
	}
	return k
}

// A diffCase is one input of the corpus: the bytes, and whether the
// client half-closes right after them. want, when set, pins the statuses
// both servers give (diffResult.statuses), so that the corpus also says
// what the right answer is.
type diffCase struct {
	name string
	in   string
	shut bool
	want string
}

func TestDifferential(t *testing.T) {
	s := startDiffServers(t)
	// The runs wait for quiet periods, not for the CPU: run them all at
	// once (a few at a time), then again, one at a time and more
	// patiently, those whose outcome may be the machine's slowness; then
	// judge each in its subtest.
	outcomes := make([]*diffOutcome, len(diffCorpus))
	errs := make([]error, len(diffCorpus))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, tc := range diffCorpus {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcomes[i], errs[i] = s.once([]byte(tc.in), tc.shut, testPace)
		}()
	}
	wg.Wait()
	for i, tc := range diffCorpus {
		outcomes[i], errs[i] = s.settle(outcomes[i], errs[i], []byte(tc.in), tc.shut, tc.want)
	}
	for i, tc := range diffCorpus {
		t.Run(tc.name, func(t *testing.T) {
			o := outcomes[i]
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			k := judge(t, o)
			if t.Failed() {
				return
			}
			if tc.want != "" {
				if got := o.std.statuses(); got != tc.want {
					t.Errorf("net/http: statuses %q, want %q\n%v", got, tc.want, o)
				}
				if got := o.gale.statuses(); got != tc.want && k == nil {
					t.Errorf("gale: statuses %q, want %q\n%v", got, tc.want, o)
				}
			}
			switch {
			case k != nil && k.bug != "":
				t.Skipf("known bug %s (%s): %s\n%v", k.name, k.bug, k.why, o)
			case k != nil:
				t.Logf("known difference %s: %s", k.name, k.why)
			}
		})
	}
}
