package http1_test

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

	"github.com/galeio/gale/http1"
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
	g := start(tb, &http1.Server{ErrorLog: quiet}, http.HandlerFunc(diffEcho))
	return diffServers{std: ln.Addr().String(), gale: g}
}

// A diffPace is how long a run waits: quiet is the silence that ends its
// first phase, linger how long the server may take to close once the
// client half-closed (after that it is "hung").
type diffPace struct {
	quiet, linger time.Duration
}

var (
	testPace = diffPace{quiet: 100 * time.Millisecond, linger: 2 * time.Second}
	// slowPace is for a second try, when the first shows a difference
	// not in knownDiffs: a slow machine is not taken for a disagreement.
	slowPace = diffPace{quiet: time.Second, linger: 3 * time.Second}
)

// diffBound bounds a whole exchange.
const diffBound = 10 * time.Second

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

func (r diffReply) String() string {
	if r.err != "" && r.status == "" {
		return "unparsed: " + r.err
	}
	s := fmt.Sprintf("%s | %s | body %q", r.status, r.header, r.body)
	if r.err != "" {
		s += " | error: " + r.err
	}
	return s
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
	bound := time.Now().Add(diffBound)
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
			return nil, fmt.Errorf("no end to the exchange in %v", diffBound)
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
			return append(reps, diffReply{err: fmt.Sprintf("%v: %q", err, b[start:])})
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
	return fmt.Sprintf("input %+q%s\nnet/http:\n%sgale:\n%s", o.in, how, o.std, o.gale)
}

// run sends in to both servers at once, and again more patiently if they
// differ in a way knownDiffs does not explain.
func (s diffServers) run(in []byte, shut bool, pace diffPace) (*diffOutcome, error) {
	o, err := s.once(in, shut, pace)
	if err != nil || o.same() || o.known() != nil {
		return o, err
	}
	return s.once(in, shut, slowPace)
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

// A knownDiff is a difference between the two servers that is intended,
// or (with bug set: the file to fix) a bug in gale not yet fixed. match
// recognizes it in an outcome, whatever the input, so that the fuzz
// target passes over it too.
type knownDiff struct {
	name  string
	why   string
	bug   string
	match func(o *diffOutcome) bool
}

var knownDiffs = []knownDiff{
	{
		name: "eof-mid-head",
		why: "the client half-closed in the middle of a head: net/http parses what it has and " +
			"answers 400, gale closes without a word (no request was whole, so none is lost)",
		match: func(o *diffOutcome) bool {
			s, g := o.std, o.gale
			n := len(s.after) - 1
			return !s.closed && !g.closed && s.end == "closed" && g.end == "closed" &&
				replies(s.open) == replies(g.open) && n >= 0 &&
				s.after[n].status == "HTTP/1.1 400 Bad Request" && replies(s.after[:n]) == replies(g.after)
		},
	},
	{
		name: "refused-mid-head",
		why: "a head whose request line or a field line is malformed, and which never ends: " +
			"net/http's parser reads line by line and answers 400 at the bad line; gale " +
			"frames a head whole on the loop before net/http's parser sees it, so it waits " +
			"for the rest (until the header timeout, or the client's end, when it closes " +
			"without a word). Once the head ends both answer 400. Refusing early would take " +
			"a line parser of gale's own beside net/http's, free to drift from it",
		match: func(o *diffOutcome) bool {
			s, g := o.std, o.gale
			n := len(s.open) - 1
			return s.closed && !g.closed && n >= 0 && s.open[n].status == "HTTP/1.1 400 Bad Request" &&
				replies(s.open[:n]) == replies(g.open) && len(g.after) == 0 && g.end == "closed"
		},
	},
	{
		name: "431-read-ahead",
		why: "net/http's head limit (MaxHeaderBytes + 4096) counts the bytes it reads from the " +
			"socket for a request, so the part of a pipelined head read ahead with the " +
			"request before it (up to its 4 KiB buffer) is free: it takes such heads up to " +
			"about 4 KiB longer; gale counts the head itself, the same for every request",
		match: func(o *diffOutcome) bool {
			s, g := o.std, o.gale
			n := len(g.open) - 1
			return len(o.in) > 1<<20 && g.closed && n > 0 && len(s.open) > n &&
				strings.HasPrefix(g.open[n].status, "HTTP/1.1 431 ") && !strings.HasPrefix(s.open[n].status, "HTTP/1.1 431 ") &&
				replies(s.open[:n]) == replies(g.open[:n])
		},
	},
	{
		name: "unread-chunked-closes",
		why: "the handler left a chunked body unread and the loop had not seen its end when the " +
			"response began: net/http reads up to 256 KiB of it to keep the connection, gale " +
			"closes the connection after the response (it does not hold the response back to " +
			"find out how long the body is)",
		match: func(o *diffOutcome) bool {
			s, g := o.std, o.gale
			return bytes.Contains(o.in, []byte("/unread")) && bytes.Contains(o.in, []byte("chunked")) &&
				g.closed && !s.closed && len(g.open) > 0 &&
				strings.HasPrefix(replies(s.open, s.after), replies(g.without(isClose).open))
		},
	},
	{
		name: "unread-body-answered-first",
		why: "the handler left the body unread and the rest of it had not come: net/http reads " +
			"(up to 256 KiB of) it before it writes the response (which then says close if the " +
			"body was cut short), gale writes the response at once and drops the body's bytes " +
			"as they come",
		match: func(o *diffOutcome) bool {
			s, g := o.std.without(isClose), o.gale
			return bytes.Contains(o.in, []byte("/unread")) && !s.closed && !g.closed &&
				s.end == g.end && len(g.open) > len(s.open) &&
				replies(s.open, s.after) == replies(g.open, g.after)
		},
	},
}

// isClose reports whether r says "Connection: close".
func isClose(r diffReply) bool {
	return slices.Contains(strings.Split(r.header, " | "), "Connection: close")
}

// without returns r with the Connection field taken from the responses f
// picks.
func (r *diffResult) without(f func(diffReply) bool) *diffResult {
	strip := func(reps []diffReply) []diffReply {
		reps = slices.Clone(reps)
		for i, rep := range reps {
			if f(rep) {
				fields := slices.DeleteFunc(strings.Split(rep.header, " | "), func(s string) bool {
					return strings.HasPrefix(s, "Connection: ")
				})
				reps[i].header = strings.Join(fields, " | ")
			}
		}
		return reps
	}
	c := *r
	c.open, c.after = strip(r.open), strip(r.after)
	return &c
}

// replies renders lists of responses for comparison.
func replies(lists ...[]diffReply) string {
	var b strings.Builder
	for _, l := range lists {
		for _, r := range l {
			fmt.Fprintf(&b, "%v\n", r)
		}
	}
	return b.String()
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
	// once (a few at a time), then judge each in its subtest.
	outcomes := make([]*diffOutcome, len(diffCorpus))
	errs := make([]error, len(diffCorpus))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, tc := range diffCorpus {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			o, err := s.run([]byte(tc.in), tc.shut, testPace)
			if err == nil && tc.want != "" && (o.std.statuses() != tc.want || o.gale.statuses() != tc.want) {
				o, err = s.once([]byte(tc.in), tc.shut, slowPace) // a slow machine
			}
			outcomes[i], errs[i] = o, err
		}()
	}
	wg.Wait()
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

// Helpers for writing the corpus.
const (
	get  = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	post = "POST /p HTTP/1.1\r\nHost: x\r\n"
	te   = post + "Transfer-Encoding: chunked\r\n\r\n"
)

// diffCorpus is the differential test's corpus, and the fuzz target's
// seeds. Ideas come from net/http's own tests (readrequest_test.go,
// request_test.go, serve_test.go, internal/chunked_test.go), RFC 9112 and
// the kinds of request smuggling in the literature; the bytes are ours.
var diffCorpus = []diffCase{
	// Well-formed requests.
	{name: "get", in: get, want: "200 | closed"},
	{name: "get-query", in: "GET /a/b/../c?x=1&y=%20z HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-fragment", in: "GET /a#frag HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-double-slash", in: "GET //x/../y HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-bad-escape-in-query", in: "GET /p?q=%ZZ&%%% HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-star", in: "GET * HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-lowercase-method", in: "get / HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-odd-method", in: "M-SEARCH! / HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "get-with-body", in: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "post-cl", in: post + "Content-Length: 5\r\n\r\nhello", want: "200 | closed"},
	{name: "post-cl-zero", in: post + "Content-Length: 0\r\n\r\n"},
	{name: "post-no-length", in: post + "\r\n"},
	{name: "post-chunked", in: te + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", want: "200 | closed"},
	{name: "post-chunked-trailer", in: post + "Trailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 42\r\nX-Other: a\r\nX-Other: b\r\n\r\n"},
	{name: "post-chunked-upper-hex", in: te + "A\r\n0123456789\r\n0\r\n\r\n"},
	{name: "post-chunked-16-digits", in: te + "0000000000000003\r\nabc\r\n0\r\n\r\n"},
	{name: "post-chunked-ext", in: te + "3;name=value;q=\"a;b\"\r\nabc\r\n0;last\r\n\r\n"},
	{name: "post-chunked-ws-before-ext", in: te + "3 \t;ext\r\nabc\r\n0\t \r\n\r\n"},
	{name: "post-chunked-TE-case", in: post + "Transfer-Encoding: ChUnKeD\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
	{name: "post-chunked-000", in: te + "3\r\nabc\r\n000\r\n\r\n"},
	{name: "head", in: "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "head-then-get", in: "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n" + get},
	{name: "put-delete", in: "PUT /r HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhiDELETE /r HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "options-star", in: "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "options-star-body", in: "OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + get},
	{name: "options-path", in: "OPTIONS /x HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "connect", in: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"},
	{name: "connect-no-host", in: "CONNECT example.com:443 HTTP/1.1\r\n\r\n"},
	{name: "connect-path", in: "CONNECT /rpc HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "connect-bad-authority", in: "CONNECT []%20%48 HTTP/1.0\r\n\r\n"},
	{name: "absolute-form", in: "GET http://example.com/p?q=1 HTTP/1.1\r\nHost: other\r\n\r\n"},
	{name: "absolute-form-https-port", in: "GET https://example.com:8443/ HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "absolute-form-no-host", in: "GET http://example.com/ HTTP/1.1\r\n\r\n", want: "400 close"},
	{name: "absolute-form-bad-host-field", in: "GET http://example.com/ HTTP/1.1\r\nHost: {\r\n\r\n", want: "400 close"},
	{name: "absolute-form-userinfo", in: "GET http://u:p@example.com HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "absolute-form-no-path", in: "GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n"},
	{name: "absolute-form-bad-port", in: "GET http://example.com:x/ HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "authority-form-get", in: "GET example.com:80 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "http10", in: "GET / HTTP/1.0\r\n\r\n" + get, want: "200 close"},
	{name: "http10-keep-alive", in: "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n" + get, want: "200 200 200 | closed"},
	{name: "http10-post-keep-alive", in: "POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi" + "GET / HTTP/1.0\r\n\r\n"},
	{name: "http11-close", in: "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + get, want: "200 close"},
	{name: "http11-close-token", in: "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, CLOSE\r\n\r\n" + get},
	{name: "http11-close-space", in: "GET / HTTP/1.1\r\nHost: x\r\nConnection: foo close\r\n\r\n" + get},
	{name: "http10-keep-alive-space", in: "GET / HTTP/1.0\r\nConnection: foo keep-alive\r\n\r\n" + get},
	{name: "pipelined", in: get + post + "Content-Length: 3\r\n\r\nabc" + te + "3\r\nxyz\r\n0\r\nX-T: 1\r\n\r\n" + "HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n" + "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", want: "200 200 200 200 200 close"},
	{name: "crlf-after-post", in: post + "Content-Length: 3\r\n\r\nABC\r\n\r\n" + get, want: "200 200 | closed"},
	{name: "lf-after-post", in: post + "Content-Length: 3\r\n\r\nABC\n\n\n\n" + get},
	{name: "5-crlf-after-post", in: post + "Content-Length: 3\r\n\r\nABC\r\n\r\n\r\n" + get},
	{name: "crlf-after-get", in: get + "\r\n" + get},
	{name: "lf-after-get-alone", in: get + "\n", want: "200 | closed"},
	{name: "short-head-after-get", in: "0 * HTTP/1.1\nHost:\n\n\n", want: "200 | closed"},
	{name: "lf-after-get-then-get", in: get + "\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", want: "200 400 close"},
	{name: "crlfs-after-post-then-lf", in: post + "Content-Length: 1\r\n\r\nA\r\n\r\n\n"},
	{name: "crlf-before-first", in: "\r\n" + get, want: "400 close"},
	{name: "repeated-fields", in: "GET / HTTP/1.1\r\nHost: x\r\nAccept: a\r\naccept: b\r\nACCEPT: c, d\r\n\r\n"},
	{name: "field-names", in: "GET / HTTP/1.1\r\nHost: x\r\nx-foo-bar: 1\r\nfoo_bar: 2\r\nX-1~!#$%&'*+.^`|: 3\r\n\r\n"},
	{name: "field-values", in: "GET / HTTP/1.1\r\nHost: x\r\nA: \t v \t\r\nB:\r\nC:no-space\r\nD: a  b\tc\r\nE: \xff\xfe\r\n\r\n"},
	{name: "pragma", in: "GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\n\r\n"},
	{name: "many-fields", in: "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Many: 1\r\n", 2000) + "\r\n"},
	{name: "bare-lf", in: "GET / HTTP/1.1\nHost: x\nA: 1\n\n" + get},
	{name: "bare-lf-mixed", in: "GET / HTTP/1.1\r\nHost: x\n\r\n" + "GET /2 HTTP/1.1\nHost: x\r\n\n"},
	{name: "bare-lf-post", in: "POST / HTTP/1.1\nHost: x\nContent-Length: 3\n\nabc"},

	{name: "upgrade-h2c", in: "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n" + get},
	{name: "upgrade-websocket", in: "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" + get},
	{name: "te-chunked-cl-zero", in: post + "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + get},
	{name: "chunk-trailer-host", in: te + "0\r\nHost: evil\r\nTransfer-Encoding: chunked\r\n\r\n" + get},

	// Request lines.
	{name: "line-two-spaces", in: "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-tabs", in: "GET\t/\tHTTP/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-extra-word", in: "GET / HTTP/1.1 x\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-no-version", in: "GET /\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-method-only", in: "GET\r\n\r\n", want: "400 close"},
	{name: "line-bad-method", in: "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-bad-escape", in: "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-nul-in-target", in: "GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-ctl-in-target", in: "GET /\x7f HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "line-non-ascii-target", in: "GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "line-cr-before-crlf", in: "GET / HTTP/1.1\r\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-bare-cr", in: "GET / HTTP/1.1\rHost: x\r\n\r\n", want: "400 close"},
	{name: "line-empty-target", in: "GET  HTTP/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "line-long-target", in: "GET /" + strings.Repeat("a", 100<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n"},

	// Versions.
	{name: "version-0.9", in: "GET / HTTP/0.9\r\n\r\n", want: "505 close"},
	{name: "version-1.2", in: "GET / HTTP/1.2\r\nHost: x\r\n\r\n"},
	{name: "version-1.2-no-host", in: "GET / HTTP/1.2\r\n\r\n", want: "400 close"},
	{name: "version-2.0", in: "GET / HTTP/2.0\r\nHost: x\r\n\r\n", want: "505 close"},
	{name: "version-3.0", in: "GET / HTTP/3.0\r\nHost: x\r\n\r\n", want: "505 close"},
	{name: "version-1.10", in: "GET / HTTP/1.10\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "version-lowercase", in: "GET / http/1.1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "version-no-minor", in: "GET / HTTP/1\r\nHost: x\r\n\r\n", want: "400 close"},
	{name: "pri-star", in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
	{name: "pri-path", in: "PRI / HTTP/2.0\r\n\r\n", want: "505 close"},
	{name: "pri-star-with-fields", in: "PRI * HTTP/2.0\r\nX: 1\r\n\r\n", want: "400 close"},

	// Host.
	{name: "host-missing", in: "GET / HTTP/1.1\r\n\r\n", want: "400 close"},
	{name: "host-missing-1.0", in: "GET / HTTP/1.0\r\n\r\n", want: "200 close"},
	{name: "host-empty", in: "GET / HTTP/1.1\r\nHost:\r\n\r\n", want: "200 | closed"},
	{name: "host-two", in: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", want: "400 close"},
	{name: "host-two-1.0", in: "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", want: "400 close"},
	{name: "host-forms", in: "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\nGET / HTTP/1.1\r\nHost: foo-bar_baz.com:8080\r\n\r\nGET / HTTP/1.1\r\nHost: [::1%25en0]:80\r\n\r\n"},
	{name: "host-brace", in: "GET / HTTP/1.1\r\nHost: {\r\n\r\n", want: "400 close"},
	{name: "host-space", in: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", want: "400 close"},
	{name: "host-high-octet", in: "GET / HTTP/1.1\r\nHost: \xff\r\n\r\n", want: "400 close"},
	{name: "host-ctl", in: "GET / HTTP/1.1\r\nHost: \x06\r\n\r\n", want: "400 close"},
	{name: "host-userinfo", in: "GET / HTTP/1.1\r\nHost: user@x\r\n\r\n"},
	{name: "host-trailing-dot-port", in: "GET / HTTP/1.1\r\nHost: x.:\r\n\r\n"},
	{name: "host-lowercase-field", in: "GET / HTTP/1.1\r\nhOsT: y\r\n\r\n"},
	{name: "host-obs-fold", in: "GET / HTTP/1.1\r\nHost:\r\n x\r\n\r\n"},

	// Field syntax.
	{name: "field-space-before-colon", in: "GET / HTTP/1.1\r\nHost: x\r\nFoo : bar\r\n\r\n", want: "400 close"},
	{name: "field-tab-before-colon", in: "GET / HTTP/1.1\r\nHost: x\r\nFoo\t: bar\r\n\r\n", want: "400 close"},
	{name: "field-space-in-name", in: "GET / HTTP/1.1\r\nHost: x\r\nA space: foo\r\n\r\n", want: "400 close"},
	{name: "field-empty-name", in: "GET / HTTP/1.1\r\nHost: x\r\n: empty\r\n\r\n", want: "400 close"},
	{name: "field-no-colon", in: "GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", want: "400 close"},
	{name: "field-leading-space-first", in: "GET / HTTP/1.1\r\n Host: x\r\n\r\n", want: "400 close"},
	{name: "field-leading-tab-first", in: "GET / HTTP/1.1\r\n\tHost: x\r\n\r\n", want: "400 close"},
	{name: "field-obs-fold", in: "GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\tc\r\n\r\n"},
	{name: "field-nul-value", in: "GET / HTTP/1.1\r\nHost: x\r\nfoo: a\x00b\r\n\r\n", want: "400 close"},
	{name: "field-del-value", in: "GET / HTTP/1.1\r\nHost: x\r\nfoo: a\x7fb\r\n\r\n", want: "400 close"},
	{name: "field-cr-value", in: "GET / HTTP/1.1\r\nHost: x\r\nfoo: a\rb\r\n\r\n", want: "400 close"},
	{name: "field-nul-name", in: "GET / HTTP/1.1\r\nHost: x\r\nfoo\x00bar: a\r\n\r\n", want: "400 close"},
	{name: "field-high-octet-name", in: "GET / HTTP/1.1\r\nHost: x\r\nfoo\xffbar: a\r\n\r\n", want: "400 close"},
	{name: "field-quote-name", in: "GET / HTTP/1.1\r\nHost: x\r\nfoo\"bar: a\r\n\r\n", want: "400 close"},

	// Content-Length.
	{name: "cl-two-differ", in: post + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", want: "400 close"},
	{name: "cl-two-equal", in: post + "Content-Length: 3\r\nContent-Length: 3 \r\ncontent-length:3\r\n\r\nabc", want: "200 | closed"},
	{name: "cl-two-head", in: "HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n", want: "400 close"},
	{name: "cl-list", in: post + "Content-Length: 3, 3\r\n\r\nabc", want: "400 close"},
	{name: "cl-empty", in: post + "Content-Length:\r\n\r\n", want: "400 close"},
	{name: "cl-empty-and-value", in: post + "Content-Length:\r\nContent-Length: 3\r\n\r\nabc", want: "400 close"},
	{name: "cl-plus", in: post + "Content-Length: +3\r\n\r\nabc", want: "400 close"},
	{name: "cl-minus", in: post + "Content-Length: -1\r\n\r\n", want: "400 close"},
	{name: "cl-hex", in: post + "Content-Length: 0x3\r\n\r\nabc", want: "400 close"},
	{name: "cl-leading-zeros", in: post + "Content-Length: 003\r\n\r\nabc"},
	{name: "cl-overflow", in: post + "Content-Length: 99999999999999999999\r\n\r\n", want: "400 close"},
	{name: "cl-huge", in: post + "Content-Length: 9223372036854775807\r\n\r\nabc"},
	{name: "cl-notdigits", in: post + "Content-Length: notdigits\r\n\r\n", want: "400 close"},
	{name: "cl-obs-fold", in: post + "Content-Length:\r\n 3\r\n\r\nabc"},
	{name: "cl-short-body", in: post + "Content-Length: 10\r\n\r\nabc"},
	{name: "cl-smuggled-get", in: post + "Content-Length: 3\r\n\r\nabcGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", want: "200 200 | closed"},

	// Transfer-Encoding.
	{name: "te-and-cl", in: post + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get},
	{name: "cl-and-te", in: post + "Transfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + get},
	{name: "te-and-bad-cl", in: post + "Content-Length: notdigits\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", want: "400 close"},
	{name: "te-chunked-identity", in: post + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", want: "501 close"},
	{name: "te-gzip-chunked", in: post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", want: "501 close"},
	{name: "te-identity", in: post + "Transfer-Encoding: identity\r\nContent-Length: 3\r\n\r\nabc", want: "501 close"},
	{name: "te-xchunked", in: post + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", want: "501 close"},
	{name: "te-quoted", in: post + "Transfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n", want: "501 close"},
	{name: "te-two-fields", in: post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", want: "501 close"},
	{name: "te-empty", in: post + "Transfer-Encoding:\r\n\r\n", want: "501 close"},
	{name: "te-obs-fold", in: post + "Transfer-Encoding:\r\n chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
	{name: "te-padded", in: post + "Transfer-Encoding: \tchunked \t\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
	{name: "te-http10", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
	{name: "te-http10-cl", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "te-on-get", in: "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get},

	// Chunked framing.
	{name: "chunk-size-empty", in: te + "\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-0x", in: te + "0x3\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-negative", in: te + "-3\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-plus", in: te + "+3\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-leading-space", in: te + " 3\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-17-digits", in: te + "00000000000000003\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-overflow", in: te + "10000000000000000\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-huge", in: te + "ffffffffffffffff\r\nabc"},
	{name: "chunk-size-2^62+2^61", in: te + "6000000000000000\r\nabc"},
	{name: "chunk-size-underscore", in: te + "1_0\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-bare-lf", in: te + "3\nabc\r\n0\r\n\r\n"},
	{name: "chunk-size-cr-cr-lf", in: te + "3\r\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-ext-bare-lf", in: te + "3;\nabc\r\n0\r\n\r\n"},
	{name: "chunk-ext-cr", in: te + "3;a\rb\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-data-bare-lf", in: te + "3\r\nabc\n0\r\n\r\n"},
	{name: "chunk-data-no-crlf", in: te + "3\r\nabcX\r\n0\r\n\r\n"},
	{name: "chunk-data-too-long", in: te + "3\r\nabcdef\r\n0\r\n\r\n"},
	{name: "chunk-last-bare-lf", in: te + "3\r\nabc\r\n0\n\r\n"},
	{name: "chunk-end-bare-lf", in: te + "3\r\nabc\r\n0\r\n\n"},
	{name: "chunk-end-bare-lf-then-get", in: te + "3\r\nabc\r\n0\r\n\n" + get},
	{name: "chunk-trailer-bare-lf", in: te + "3\r\nabc\r\n0\r\nX-T: 1\n\n" + get},
	{name: "chunk-trailer-no-colon", in: te + "0\r\nbad\r\n\r\n" + get},
	{name: "chunk-trailer-cl", in: te + "3\r\nabc\r\n0\r\nContent-Length: 10\r\n\r\n" + get},
	{name: "chunk-trailer-long", in: te + "0\r\nX-Long: " + strings.Repeat("t", 5000) + "\r\n\r\n" + get},
	{name: "chunk-trailer-4096", in: te + "0\r\nX-Long: " + strings.Repeat("t", 4096-14) + "\r\n\r\n" + get},
	{name: "chunk-trailer-4097", in: te + "0\r\nX-Long: " + strings.Repeat("t", 4097-14) + "\r\n\r\n" + get},
	{name: "chunk-line-4095", in: te + "3;" + strings.Repeat("e", 4091) + "\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-line-4096", in: te + "3;" + strings.Repeat("e", 4092) + "\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-line-5000", in: te + "3;" + strings.Repeat("e", 5000) + "\r\nabc\r\n0\r\n\r\n"},
	{name: "chunk-too-much-overhead", in: te + strings.Repeat("1;"+strings.Repeat("e", 100)+"\r\na\r\n", 200) + "0\r\n\r\n"},
	{name: "chunk-smuggled-get", in: te + "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", want: "200 200 | closed"},
	{name: "chunk-cut-in-size", in: te + "3"},
	{name: "chunk-cut-in-data", in: te + "3\r\nab"},
	{name: "chunk-cut-before-crlf", in: te + "3\r\nabc"},
	{name: "chunk-cut-in-crlf", in: te + "3\r\nabc\r"},
	{name: "chunk-cut-after-last", in: te + "3\r\nabc\r\n0\r\n"},
	{name: "chunk-cut-after-last-cr", in: te + "3\r\nabc\r\n0\r\n\r"},
	{name: "chunk-cut-in-trailer", in: te + "3\r\nabc\r\n0\r\nX-T: 1\r\n"},

	// Limits: net/http's 1 MiB default MaxHeaderBytes, plus its 4 KiB of
	// read-ahead.
	{name: "limit-head-under", in: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 1<<20) + "\r\n\r\n"},
	{name: "limit-head-exact", in: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 1<<20+4096-36) + "\r\n\r\n", want: "200 | closed"},
	{name: "limit-head-exact+1", in: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 1<<20+4096-35) + "\r\n\r\n", want: "431 close"},
	{name: "limit-pipelined-read-ahead", in: get + "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 1<<20+4096-36+100) + "\r\n\r\n"},
	{name: "limit-head-over", in: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 1<<20+4096) + "\r\n\r\n", want: "431 close"},
	{name: "limit-head-2MiB", in: "GET / HTTP/1.1\r\nHost: x\r\nFoo: " + strings.Repeat("x", 1<<21) + "\r\n\r\n", want: "431 close"},
	{name: "limit-many-fields", in: "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 100)+"\r\n", 11000) + "\r\n", want: "431 close"},
	{name: "limit-request-line", in: "GET /" + strings.Repeat("a", 1<<20+4096) + " HTTP/1.1\r\nHost: x\r\n\r\n", want: "431 close"},
	{name: "limit-no-end", in: "GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("a", 1<<20+5000), want: "431 close"},

	// Expect.
	{name: "expect-continue", in: post + "Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc", want: "100 200 | closed"},
	{name: "expect-continue-case", in: post + "Expect: 100-Continue\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "expect-continue-no-body", in: post + "Expect: 100-continue\r\nContent-Length: 0\r\n\r\n", want: "200 | closed"},
	{name: "expect-continue-chunked", in: post + "Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
	{name: "expect-continue-http10", in: "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "expect-continue-unread", in: "POST /unread HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc" + get},
	{name: "expect-other", in: post + "Expect: something\r\nContent-Length: 3\r\n\r\nabc", want: "417 close"},
	{name: "expect-empty", in: post + "Expect:\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "expect-other-http10", in: "POST / HTTP/1.0\r\nExpect: something\r\nContent-Length: 3\r\n\r\nabc", want: "417 close"},
	{name: "expect-continue-among-words", in: post + "Expect: x 100-continue\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "expect-two", in: post + "Expect: 100-continue\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc"},

	// Bodies the handler leaves unread.
	{name: "unread-cl", in: "POST /unread HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + get, want: "200 200 | closed"},
	{name: "unread-chunked", in: "POST /unread HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + get},
	{name: "unread-cl-short", in: "POST /unread HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello"},
	{name: "unread-chunked-bad", in: "POST /unread HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n" + get},

	{name: "unread-cl-big", in: "POST /unread HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n" + strings.Repeat("u", 300000) + get},
	{name: "unread-chunked-big", in: "POST /unread HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("1000\r\n"+strings.Repeat("u", 4096)+"\r\n", 40) + "0\r\n\r\n" + get},
	{name: "unread-chunked-100k", in: "POST /unread HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("1000\r\n"+strings.Repeat("u", 4096)+"\r\n", 25) + "0\r\n\r\n" + get},
	{name: "options-star-big-body", in: "OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat("o", 5000) + get},
	{name: "post-big-cl", in: post + "Content-Length: 300000\r\n\r\n" + strings.Repeat("b", 300000) + get},
	{name: "post-big-chunked", in: te + strings.Repeat("1000\r\n"+strings.Repeat("c", 4096)+"\r\n", 80) + "0\r\n\r\n" + get},

	// The client half-closes right after its bytes.
	{name: "shut-get", in: get, shut: true, want: "| 200 closed"},
	{name: "shut-pipelined", in: get + "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n" + "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n", shut: true, want: "| 200 200 200 closed"},
	{name: "shut-post-cl", in: post + "Content-Length: 5\r\n\r\nhello" + get, shut: true},
	{name: "shut-post-chunked", in: te + "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n" + get, shut: true},
	{name: "shut-post-big-cl", in: post + "Content-Length: 300000\r\n\r\n" + strings.Repeat("b", 300000), shut: true},
	{name: "shut-post-big-chunked", in: te + strings.Repeat("1000\r\n"+strings.Repeat("c", 4096)+"\r\n", 80) + "0\r\n\r\n", shut: true},
	{name: "shut-cl-short", in: post + "Content-Length: 10\r\n\r\nhello", shut: true},
	{name: "shut-chunk-cut", in: te + "5\r\nhel", shut: true},
	{name: "shut-chunk-cut-in-trailer", in: te + "0\r\nX-T", shut: true},
	{name: "shut-cut-in-head", in: get + "GET / HTTP/1.1\r\nHo", shut: true},
	{name: "shut-bad-head", in: get + "GET / HTTP/1.1\r\nBad Field: 1\r\n\r\n", shut: true, want: "| 200 400 closed"},
	{name: "shut-http10", in: "GET / HTTP/1.0\r\n\r\n", shut: true},
	{name: "shut-empty", in: "", shut: true, want: "| closed"},

	// Cut short.
	{name: "cut-in-line", in: "GET / HT"},
	{name: "cut-in-head", in: "GET / HTTP/1.1\r\nHost: x\r\n"},
	{name: "cut-after-get", in: get + "GET / HTTP/1.1\r\n"},
	{name: "cut-after-bad-line", in: "0\n"},
	{name: "cut-after-bad-field", in: "GET / HTTP/1.1\r\nHost: x\r\nBad Field: 1\r\n"},
	{name: "garbage", in: "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"},
	{name: "empty-line-only", in: "\r\n\r\n"},
}
