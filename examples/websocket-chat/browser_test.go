//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/tooltest"
)

// browserTimeout bounds the browser test, from the build of the program
// to the last check; closing the browser takes at most 8 s more.
const browserTimeout = 45 * time.Second

// TestBrowser runs the example's program and three tabs of headless
// Chromium on its page: they join, talk at once and all see the same
// conversation, compressed (permessage-deflate); a tab that closes is
// seen leaving; and when the server restarts gracefully (SIGTERM: 1001 to
// every page, exit 0) and comes back on the same address, the pages
// reconnect by themselves, join again under their nicknames and talk.
func TestBrowser(t *testing.T) {
	chromium := tooltest.Need(t, "chromium", "the browser")
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()

	bin := buildChat(ctx, t)
	t.Logf("built in %v", time.Since(begin).Round(time.Millisecond))
	srv := startChat(t, bin, "127.0.0.1:0")
	b := startBrowser(ctx, t, chromium, clientEngine(t))
	t.Logf("server and browser up at %v; DevTools connection compressed: %v", time.Since(begin).Round(time.Millisecond), b.cdp.conn.Compressed())

	// Three tabs join, one after the other.
	nicks := []string{"ann", "ben", "Cât 🐈"}
	tabs := make([]*tab, len(nicks))
	for i, nick := range nicks {
		tb, err := b.open(ctx, "http://"+srv.addr+"/")
		if err != nil {
			t.Fatal(err)
		}
		tb.name = nick
		tabs[i] = tb
		waitTrue(ctx, t, tb, "the page to load", `document.readyState === "complete" && document.body.dataset.state === "idle"`)
		run(ctx, t, tb, `document.getElementById("nick").value = `+jsString(nick)+`;
			document.getElementById("join").requestSubmit()`)
		waitTrue(ctx, t, tb, "the welcome", `document.body.dataset.state === "joined"`)
		// The nickname's form made way for the room's.
		waitTrue(ctx, t, tb, "the room to show", `getComputedStyle(document.getElementById("join")).display === "none" &&
			document.getElementById("text").checkVisibility()`)
	}
	for i, tb := range tabs {
		var ext string
		if err := tb.eval(ctx, `document.getElementById("ext").textContent`, &ext); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ext, "permessage-deflate") {
			t.Errorf("%s: ws.extensions is %q: permessage-deflate was not agreed on", tb.name, ext)
		} else if i == 0 {
			t.Logf("ws.extensions: %s", ext)
		}
		// Each was told who was there, and of those who came after.
		var want []entry
		if i == 0 {
			want = append(want, entry{"welcome", nicks[i], "you joined as " + nicks[i] + "; nobody else is here"})
		} else {
			want = append(want, entry{"welcome", nicks[i], "you joined as " + nicks[i] + "; here: " + strings.Join(nicks[:i], ", ")})
		}
		for _, n := range nicks[i+1:] {
			want = append(want, entry{"join", n, n + " joined"})
		}
		waitEntries(ctx, t, tabs, tb, "the joins", func(got []entry) bool { return slices.Equal(got, want) })
	}
	t.Logf("joined at %v", time.Since(begin).Round(time.Millisecond))

	// A nickname the server refuses (the form's maxlength holds back a
	// user, not a script): the page shows the close frame's reason, and
	// does not retry.
	bad, err := b.open(ctx, "http://"+srv.addr+"/")
	if err != nil {
		t.Fatal(err)
	}
	bad.name = "refused"
	waitTrue(ctx, t, bad, "the page to load", `document.readyState === "complete" && document.body.dataset.state === "idle"`)
	run(ctx, t, bad, `document.getElementById("nick").value = "`+strings.Repeat("x", maxNick+1)+`";
		document.getElementById("join").requestSubmit()`)
	waitEntries(ctx, t, []*tab{bad}, bad, "the refusal", func(got []entry) bool {
		return slices.Equal(got, []entry{{"closed", "", "disconnected: 1008 " + errNick.Error()}})
	})
	if err := bad.close(ctx); err != nil {
		t.Fatal(err)
	}

	// All three send at once, through the page's form; long messages are
	// compressed both ways. Each tab sees every message, its own
	// included, each sender's in order, and all in the same order.
	sent := make(map[string][]string)
	for _, nick := range nicks {
		for i := range 8 {
			text := fmt.Sprintf("%s's message %d", nick, i)
			switch i % 3 {
			case 1:
				text += ": " + strings.Repeat("tra la la ", 40) + "!"
			case 2:
				text += " — ça va? 👍 <b>&amp;</b>"
			}
			sent[nick] = append(sent[nick], text)
		}
	}
	var wg sync.WaitGroup
	for _, tb := range tabs {
		texts, _ := json.Marshal(sent[tb.name])
		wg.Go(func() {
			err := tb.eval(ctx, `for (const text of `+string(texts)+`) {
				document.getElementById("text").value = text;
				document.getElementById("send").requestSubmit();
			}`, nil)
			if err != nil {
				t.Errorf("%s: %v", tb.name, err)
			}
		})
	}
	wg.Wait()
	total := len(nicks) * len(sent[nicks[0]])
	var first []event
	for _, tb := range tabs {
		got := msgs(waitEntries(ctx, t, tabs, tb, "every message", func(got []entry) bool { return len(msgs(got)) >= total }))
		checkOrder(t, tb.name, got, sent)
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Errorf("%s and %s show the messages in different orders:\n%v\n%v", tabs[0].name, tb.name, first, got)
		}
	}
	t.Logf("messages exchanged at %v", time.Since(begin).Round(time.Millisecond))

	// A tab that closes leaves.
	gone := tabs[2]
	if err := gone.close(ctx); err != nil {
		t.Fatal(err)
	}
	tabs = tabs[:2]
	for _, tb := range tabs {
		waitEntries(ctx, t, tabs, tb, gone.name+"'s leave", func(got []entry) bool {
			return slices.Contains(got, entry{"leave", gone.name, gone.name + " left"})
		})
	}
	t.Logf("left at %v", time.Since(begin).Round(time.Millisecond))

	// A graceful restart: the pages are told, wait, and come back when
	// the server does.
	srv.stop(time.Until(deadline))
	for _, tb := range tabs {
		waitEntries(ctx, t, tabs, tb, "the server going away", func(got []entry) bool {
			return slices.Contains(got, entry{"lost", "", "connection lost (1001 server restarting); reconnecting"})
		})
	}
	t.Logf("server stopped at %v", time.Since(begin).Round(time.Millisecond))
	startChat(t, bin, srv.addr) // stopped at the end of the test
	for _, tb := range tabs {
		waitTrue(ctx, t, tb, "the new welcome", `document.body.dataset.state === "joined"`)
	}
	t.Logf("reconnected at %v", time.Since(begin).Round(time.Millisecond))
	// Each joined again as itself, and saw the other there or coming.
	for i, tb := range tabs {
		other := tabs[1-i].name
		waitEntries(ctx, t, tabs, tb, "the other's return", func(got []entry) bool {
			welcomes := 0
			for _, e := range got {
				switch {
				case e.Type == "welcome" && e.Nick == tb.name:
					welcomes++
					if welcomes == 2 && strings.HasSuffix(e.Text, "here: "+other) {
						return true
					}
				case welcomes == 2 && e == entry{"join", other, other + " joined"}:
					return true
				}
			}
			return false
		})
	}
	for _, tb := range tabs {
		text := tb.name + " is back"
		run(ctx, t, tb, `document.getElementById("text").value = `+jsString(text)+`;
			document.getElementById("send").requestSubmit()`)
		for _, other := range tabs {
			waitEntries(ctx, t, tabs, other, "a message after the restart", func(got []entry) bool {
				return got[len(got)-1] == entry{"msg", tb.name, text}
			})
		}
	}
	t.Logf("talked again at %v", time.Since(begin).Round(time.Millisecond))
}

// entry is an entry of a page's log, as shown.
type entry struct {
	Type string `json:"type"`
	Nick string `json:"nick"`
	Text string `json:"text"`
}

// entriesJS reads a page's log.
const entriesJS = `[...document.querySelectorAll("#log li")].map(li => ({
	type: li.dataset.type,
	nick: li.dataset.nick || "",
	text: li.querySelector(".text").textContent,
}))`

// msgs returns the messages of entries.
func msgs(entries []entry) []event {
	var m []event
	for _, e := range entries {
		if e.Type == "msg" {
			m = append(m, event{Type: "msg", Nick: e.Nick, Text: e.Text})
		}
	}
	return m
}

// waitEntries polls tb's log until done is true of it, and returns it.
// It fails the test when ctx ends first, showing every tab of all.
func waitEntries(ctx context.Context, t *testing.T, all []*tab, tb *tab, what string, done func([]entry) bool) []entry {
	t.Helper()
	for {
		var got []entry
		err := tb.eval(ctx, entriesJS, &got)
		if err == nil && done(got) {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: waiting for %s: %v (last error: %v)\n%s", tb.name, what, ctx.Err(), err, dumpTabs(all))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dumpTabs describes the tabs' states and logs, for a failure's report.
func dumpTabs(tabs []*tab) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var b strings.Builder
	for _, tb := range tabs {
		var v struct {
			State   string  `json:"state"`
			Status  string  `json:"status"`
			Entries []entry `json:"entries"`
		}
		err := tb.eval(ctx, `({state: document.body.dataset.state, status: document.getElementById("status").textContent, entries: `+entriesJS+`})`, &v)
		fmt.Fprintf(&b, "tab %s: %s %q (%v)\n", tb.name, v.State, v.Status, err)
		for _, e := range v.Entries {
			fmt.Fprintf(&b, "\t%s %q %q\n", e.Type, e.Nick, e.Text)
		}
	}
	return b.String()
}

// waitTrue polls the JavaScript expression expr in tb until it is true.
func waitTrue(ctx context.Context, t *testing.T, tb *tab, what, expr string) {
	t.Helper()
	for {
		var ok bool
		err := tb.eval(ctx, expr, &ok)
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: waiting for %s: %v (last error: %v)\n%s", tb.name, what, ctx.Err(), err, dumpTabs([]*tab{tb}))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// run runs the JavaScript statements js in tb.
func run(ctx context.Context, t *testing.T, tb *tab, js string) {
	t.Helper()
	if err := tb.eval(ctx, js, nil); err != nil {
		t.Fatalf("%s: %v", tb.name, err)
	}
}

// jsString returns s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
