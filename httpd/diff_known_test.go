package httpd_test

// The differences between net/http's server and gale's that the
// differential test (diff_test.go) accepts, each with its reason.

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

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
		name: "header-value-count",
		why: "a head of more than 500 field lines: Go 1.27's net/http answers 431 " +
			"(Server.MaxHeaderValueCount), Go 1.26's serves it; gale caps them as Go 1.27 " +
			"does whatever Go builds it, since each field line costs the server memory",
		match: func(o *diffOutcome) bool {
			s, g := o.std, o.gale
			n := len(g.open) - 1
			return !stdCapsHeaderValues && bytes.Count(o.in, []byte("\n")) > 500 && g.closed && n >= 0 &&
				strings.HasPrefix(g.open[n].status, "HTTP/1.1 431 ") && len(s.open) > n &&
				!strings.HasPrefix(s.open[n].status, "HTTP/1.1 431 ") && replies(s.open[:n]) == replies(g.open[:n])
		},
	},
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
