package websocket_test

// The Autobahn testsuite's harness: it runs wstest (autobahntestsuite,
// Python 2.7) in its two modes, drives its fuzzing server as a client,
// and judges and summarizes its reports. The peers under test (gale's
// echo servers and clients) are in autobahn_test.go; nothing here knows
// them.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// abCaseCount is the number of cases wstest runs for one agent with
// "cases": ["*"]: autobahntestsuite 25.10.1 has 517 (groups 1-7, 9, 10, 12
// and 13; group 8 has none). Another version may differ: the tests say
// what they found.
const abCaseCount = 517

// abPass lists the behaviors that pass: wstest's OK, NON-STRICT (allowed
// by the RFC, but not its preferred behavior) and INFORMATIONAL (only
// recorded). Every other one (FAILED, WRONG CODE, UNCLEAN, UNIMPLEMENTED)
// fails, in behavior and in behaviorClose alike.
var abPass = map[string]bool{"OK": true, "NON-STRICT": true, "INFORMATIONAL": true}

// abResult is a case's entry in a report's index.json.
type abResult struct {
	Behavior        string  `json:"behavior"`
	BehaviorClose   string  `json:"behaviorClose"`
	RemoteCloseCode *int    `json:"remoteCloseCode"`
	Duration        float64 `json:"duration"` // ms
	ReportFile      string  `json:"reportfile"`
}

// abIndex is index.json: agent -> case id -> result.
type abIndex map[string]map[string]abResult

// abCase is what a case's own report (its reportfile) says, in part.
type abCase struct {
	ID              string          `json:"id"`
	Description     string          `json:"description"`
	Expectation     string          `json:"expectation"`
	Behavior        string          `json:"behavior"`
	BehaviorClose   string          `json:"behaviorClose"`
	Result          string          `json:"result"`
	ResultClose     string          `json:"resultClose"`
	Expected        json.RawMessage `json:"expected"`
	Received        json.RawMessage `json:"received"`
	LocalCloseCode  *int            `json:"localCloseCode"`
	RemoteCloseCode *int            `json:"remoteCloseCode"`
	RemoteReason    *string         `json:"remoteCloseReason"`
	WasClean        bool            `json:"wasClean"`
	DroppedByMe     bool            `json:"droppedByMe"`
}

// abRun is one agent's run: its results and where wstest left them.
type abRun struct {
	Agent   string
	Mode    string // "server" (wstest's fuzzingclient tests it) or "client"
	Dir     string // the reports' directory (outdir)
	Results map[string]abResult
	Wall    time.Duration
	Notes   []string // what went wrong outside wstest's verdicts
}

// wstestCmd returns the command that runs wstest: `wstest` on PATH, or
// where `pip install --user` puts it (~/.local/bin). Missing, the test
// skips and says so, but fails under CI (the variable CI set), as
// internal/testkit/tooltest.Need does: a CI machine without wstest must not pass
// without running the suite. .ci/run installs it.
func wstestCmd(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("wstest"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".local", "bin", "wstest")
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	const how = "PYENV_VERSION=2.7.18 python -m pip install --user autobahntestsuite (see .ci/run)"
	if os.Getenv("CI") != "" {
		t.Fatalf("wstest is not installed and CI is set: CI must install it (%s)", how)
	}
	t.Skipf("wstest is not installed: this test runs it as the peer of the WebSocket tests; install it with %s", how)
	return ""
}

// wstestEnv is the environment wstest runs in: pyenv's Python 2.7 (its
// script's #! names that interpreter already; the variable keeps a pyenv
// shim, if that is what runs it, on 2.7 too) and unbuffered output, so
// that its log is whole when it is killed.
func wstestEnv() []string {
	env := os.Environ()
	if os.Getenv("PYENV_VERSION") == "" {
		env = append(env, "PYENV_VERSION=2.7.18")
	}
	return append(env, "PYTHONUNBUFFERED=1", "PYTHONWARNINGS=ignore")
}

// wstestVersion returns `wstest -a`'s answer, on one line.
func wstestVersion(wstest string) string {
	cmd := exec.Command(wstest, "-a")
	cmd.Env = wstestEnv()
	out, err := cmd.Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var parts []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, ", ")
}

// abSpec reads the spec template name from testdata/autobahn, checks that
// it runs every case with no exclusion (the suite's verdict is about all
// of it), and returns it for the caller to complete.
func abSpec(name string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "autobahn", name))
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	cases, _ := spec["cases"].([]any)
	if len(cases) != 1 || cases[0] != "*" {
		return nil, fmt.Errorf(`%s: "cases" is %v: it must be ["*"], every case`, name, spec["cases"])
	}
	if ex, _ := spec["exclude-cases"].([]any); len(ex) != 0 {
		return nil, fmt.Errorf(`%s: "exclude-cases" is %v: no case may be excluded`, name, ex)
	}
	if ex, _ := spec["exclude-agent-cases"].(map[string]any); len(ex) != 0 {
		return nil, fmt.Errorf(`%s: "exclude-agent-cases" is %v: no case may be excluded`, name, ex)
	}
	if o, _ := spec["outdir"].(string); o == "" {
		return nil, fmt.Errorf("%s: no outdir", name)
	}
	return spec, nil
}

// writeSpec makes dir and writes there, as spec.json, the spec template
// name completed by fill; it returns the spec's path and its reports'
// directory.
func writeSpec(dir, name string, fill func(spec map[string]any)) (path, outdir string, err error) {
	spec, err := abSpec(name)
	if err != nil {
		return "", "", err
	}
	fill(spec)
	b, err := json.MarshalIndent(spec, "", "  ")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	path = filepath.Join(dir, "spec.json")
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	return path, filepath.Join(dir, spec["outdir"].(string)), err
}

// wstestProc is a running wstest, its output going to dir/wstest.log.
type wstestProc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // Wait's, once done is closed
}

// startWstest starts wstest with args in dir. It is stopped (SIGTERM,
// then SIGKILL) when ctx ends.
func startWstest(ctx context.Context, wstest, dir string, args ...string) (*wstestProc, error) {
	logPath := filepath.Join(dir, "wstest.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, wstest, args...)
	cmd.Dir = dir
	cmd.Env = wstestEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting wstest: %v", err)
	}
	p := &wstestProc{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// stop ends wstest if it still runs, and waits for it.
func (p *wstestProc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail returns the last n lines of wstest's log.
func (p *wstestProc) logTail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// for wstest's fuzzing server, which must be told its port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until something accepts on addr, or p exits, or
// the deadline passes.
func waitListening(p *wstestProc, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("wstest exited (%v) before it listened on %s", p.err, addr)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wstest did not listen on %s within %v", addr, within)
		}
	}
}

// abTarget is a server under test: its agent name and URL.
type abTarget struct {
	Agent, URL string
}

// runFuzzingClient runs wstest -m fuzzingclient against target, alone,
// in a directory of its own under root, and returns its results. What
// goes wrong is in the run's notes (it runs on a goroutine of its own).
func runFuzzingClient(ctx context.Context, wstest, root string, target abTarget) *abRun {
	run := &abRun{Agent: target.Agent, Mode: "server"}
	if ctx.Err() != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("not run: %v", context.Cause(ctx)))
		return run
	}
	dir := filepath.Join(root, "server-"+target.Agent)
	specPath, outdir, err := writeSpec(dir, "fuzzingclient.json", func(spec map[string]any) {
		spec["servers"] = []map[string]any{{"agent": target.Agent, "url": target.URL}}
	})
	if err != nil {
		run.Notes = append(run.Notes, err.Error())
		return run
	}
	run.Dir = outdir
	start := time.Now()
	p, err := startWstest(ctx, wstest, dir, "-m", "fuzzingclient", "-s", specPath)
	if err != nil {
		run.Notes = append(run.Notes, err.Error())
		return run
	}
	<-p.done
	run.Wall = time.Since(start)
	if p.err != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("wstest fuzzingclient: %v (ctx: %v); its log ends:\n%s", p.err, ctx.Err(), p.logTail(30)))
	}
	if failed := connectFailures(p.log); failed != "" {
		run.Notes = append(run.Notes, "wstest could not connect: "+failed)
	}
	run.Results = readIndex(run, run.Dir)
	return run
}

// connectFailures returns wstest's "Connection to ... failed" lines: a
// server it could not reach has all its remaining cases skipped.
func connectFailures(logPath string) string {
	f, err := os.Open(logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "Connection to ") && strings.Contains(l, " failed") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

// readIndex reads dir/index.json and returns run.Agent's results; a
// missing or unreadable index becomes one of run's notes.
func readIndex(run *abRun, dir string) map[string]abResult {
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		run.Notes = append(run.Notes, "no report: "+err.Error())
		return nil
	}
	var idx abIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		run.Notes = append(run.Notes, "index.json: "+err.Error())
		return nil
	}
	for agent := range idx {
		if agent != run.Agent {
			run.Notes = append(run.Notes, fmt.Sprintf("index.json has an unexpected agent %q", agent))
		}
	}
	return idx[run.Agent]
}

// abClient is a WebSocket client under test, for the fuzzing server to
// test: Run dials url and, until the connection closes, echoes every
// message back when echo is set, or collects the messages when not. It
// returns the messages collected and how the connection ended: nil for a
// close handshake, an error otherwise (the dial's, a timeout's...). It
// must return by ctx's end.
type abClient interface {
	Run(ctx context.Context, url string, echo bool) (msgs [][]byte, err error)
}

// runFuzzingServer starts wstest -m fuzzingserver in a directory of its
// own under root and drives it with client as agent: it gets the case
// count, runs every case (each bounded by perCase), and has the reports
// written, and returns the results.
//
// It runs on a goroutine of its own: what goes wrong is in the run's
// notes, and t only logs.
func runFuzzingServer(ctx context.Context, t testing.TB, wstest, root, agent string, client abClient, perCase time.Duration) *abRun {
	run := &abRun{Agent: agent, Mode: "client"}
	if ctx.Err() != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("not run: %v", context.Cause(ctx)))
		return run
	}
	dir := filepath.Join(root, "client-"+agent)
	port, err := freePort()
	if err != nil {
		run.Notes = append(run.Notes, err.Error())
		return run
	}
	specPath, outdir, err := writeSpec(dir, "fuzzingserver.json", func(spec map[string]any) {
		spec["url"] = fmt.Sprintf("ws://127.0.0.1:%d", port)
	})
	if err != nil {
		run.Notes = append(run.Notes, err.Error())
		return run
	}
	run.Dir = outdir

	start := time.Now()
	// -u 0: no web server for the reports (it would take port 8080).
	p, err := startWstest(ctx, wstest, dir, "-m", "fuzzingserver", "-s", specPath, "-u", "0")
	if err != nil {
		run.Notes = append(run.Notes, err.Error())
		return run
	}
	defer p.stop()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := waitListening(p, addr, time.Minute); err != nil {
		run.Notes = append(run.Notes, err.Error()+"; its log ends:\n"+p.logTail(30))
		return run
	}
	base := "ws://" + addr

	// The case count: the server sends it as a message, then closes.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	msgs, err := client.Run(cctx, base+"/getCaseCount", false)
	cancel()
	n := -1
	if err == nil && len(msgs) == 1 {
		n, err = strconv.Atoi(strings.TrimSpace(string(msgs[0])))
	}
	if err != nil || n < 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("getCaseCount: %d messages %q, %v", len(msgs), msgs, err))
		return run
	}

	q := "&agent=" + url.QueryEscape(agent)
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		cctx, cancel := context.WithTimeout(ctx, perCase)
		_, err := client.Run(cctx, fmt.Sprintf("%s/runCase?case=%d%s", base, i, q), true)
		timedOut := cctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case timedOut:
			// A client that does not end a case is the harness's
			// business: wstest's report may not show it.
			run.Notes = append(run.Notes, fmt.Sprintf("case %d did not end within %v: %v", i, perCase, err))
		case err != nil && !isPeerEnd(err):
			// Not a verdict (wstest's report has it), but it may explain
			// one.
			t.Logf("%s: case %d ended with %v", agent, i, err)
		}
	}
	if ctx.Err() != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("stopped by the timeout (%v) before every case ran", ctx.Err()))
	}

	// The reports; shutdownOnComplete then stops wstest.
	cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	_, err = client.Run(cctx, base+"/updateReports?shutdownOnComplete=true"+q, false)
	cancel()
	if err != nil && testing.Verbose() {
		// wstest writes the reports before it answers, and stops as soon
		// as it has sent its close frame: the connection may end without
		// a close handshake. Whether the reports are there is what counts.
		t.Logf("%s: updateReports ended with %v", agent, err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		run.Notes = append(run.Notes, "wstest fuzzingserver did not exit after updateReports")
	}
	run.Wall = time.Since(start)
	run.Results = readIndex(run, run.Dir)
	return run
}

// isPeerEnd reports whether err is only the peer's going away, which
// many cases end with on purpose.
func isPeerEnd(err error) bool {
	return err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// abVerdict is a case that did not pass, with its report's details.
type abVerdict struct {
	ID     string
	Result abResult
	Case   abCase
}

// failures returns run's cases that did not pass, by case order.
func (run *abRun) failures() []abVerdict {
	var out []abVerdict
	for id, r := range run.Results {
		if abPass[r.Behavior] && abPass[r.BehaviorClose] {
			continue
		}
		v := abVerdict{ID: id, Result: r}
		if b, err := os.ReadFile(filepath.Join(run.Dir, r.ReportFile)); err == nil {
			json.Unmarshal(b, &v.Case)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return caseLess(out[i].ID, out[j].ID) })
	return out
}

// check fails t for each of run's failing cases, for a count other than
// want, and for each of its notes.
func (run *abRun) check(t testing.TB, want int, version string) {
	t.Helper()
	t.Logf("%s (%s): %d cases in %v: %s", run.Agent, run.Mode, len(run.Results), run.Wall.Round(time.Second), run.countLine())
	for _, n := range run.Notes {
		t.Errorf("%s: %s", run.Agent, n)
	}
	if len(run.Results) != want {
		t.Errorf("%s: wstest reported %d cases, want %d (every case of autobahntestsuite 25.10.1; this is %s)", run.Agent, len(run.Results), want, version)
	}
	for _, v := range run.failures() {
		t.Errorf("%s", v.describe(run.Agent))
	}
}

// describe says what a failing case tested and what happened.
func (v abVerdict) describe(agent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: case %s: behavior %s, close behavior %s", agent, v.ID, v.Result.Behavior, v.Result.BehaviorClose)
	c := v.Case
	if c.Description != "" {
		fmt.Fprintf(&b, "\n  description: %s", oneLine(c.Description))
		fmt.Fprintf(&b, "\n  expectation: %s", oneLine(c.Expectation))
	}
	if c.Result != "" {
		fmt.Fprintf(&b, "\n  result: %s", oneLine(c.Result))
	}
	if c.ResultClose != "" {
		fmt.Fprintf(&b, "\n  close: %s", oneLine(c.ResultClose))
	}
	if c.Description != "" {
		fmt.Fprintf(&b, "\n  close codes: ours %s, wstest's %s; clean %v, dropped by wstest %v",
			intOr(c.RemoteCloseCode), intOr(c.LocalCloseCode), c.WasClean, c.DroppedByMe)
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func intOr(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

// caseLess orders case ids ("1.1.2" < "1.1.10" < "12.1.1") numerically.
func caseLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return len(pa) < len(pb)
}

// abBehaviors are the behaviors summaries count, in their order; another
// one wstest reports is counted too, after them.
var abBehaviors = []string{"OK", "NON-STRICT", "INFORMATIONAL", "FAILED", "UNIMPLEMENTED", "WRONG CODE", "UNCLEAN"}

// abGroups names the case groups.
var abGroups = []struct{ id, name string }{
	{"1", "Framing"}, {"2", "Pings/Pongs"}, {"3", "Reserved bits"}, {"4", "Opcodes"},
	{"5", "Fragmentation"}, {"6", "UTF-8 handling"}, {"7", "Close handling"},
	{"9", "Limits/performance"}, {"10", "Auto-fragmentation"},
	{"12", "Compression, payloads"}, {"13", "Compression, parameters"},
}

// verdict is a case's one-word result: its behavior, or its close
// behavior when that alone did not pass.
func (r abResult) verdict() string {
	if abPass[r.Behavior] && !abPass[r.BehaviorClose] {
		return r.BehaviorClose
	}
	return r.Behavior
}

// counts returns how many of run's cases have each verdict.
func (run *abRun) counts(group string) map[string]int {
	m := map[string]int{}
	for id, r := range run.Results {
		if group == "" || strings.SplitN(id, ".", 2)[0] == group {
			m[r.verdict()]++
		}
	}
	return m
}

// behaviorsOf returns abBehaviors and any other verdict the runs have.
func behaviorsOf(runs []*abRun) []string {
	bs := slices.Clone(abBehaviors)
	for _, run := range runs {
		for _, r := range run.Results {
			if v := r.verdict(); !slices.Contains(bs, v) {
				bs = append(bs, v)
			}
		}
	}
	return bs
}

func (run *abRun) countLine() string {
	m := run.counts("")
	var parts []string
	for _, b := range behaviorsOf([]*abRun{run}) {
		if m[b] > 0 || abPass[b] || b == "FAILED" {
			parts = append(parts, fmt.Sprintf("%s %d", b, m[b]))
		}
	}
	return strings.Join(parts, ", ")
}

// summary returns a markdown summary of runs: per agent, the verdicts'
// counts, then per case group, then the failing cases.
func summary(runs []*abRun) string {
	var b strings.Builder
	bs := behaviorsOf(runs)
	row := func(cells ...string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	rule := func(n int) { row(slices.Repeat([]string{"---"}, n)...) }

	b.WriteString("| agent | tested as | cases | wall time | " + strings.Join(bs, " | ") + " |\n")
	rule(4 + len(bs))
	for _, run := range runs {
		m := run.counts("")
		cells := []string{"`" + run.Agent + "`", run.Mode, strconv.Itoa(len(run.Results)), run.Wall.Round(time.Second).String()}
		for _, x := range bs {
			cells = append(cells, strconv.Itoa(m[x]))
		}
		row(cells...)
	}

	for _, run := range runs {
		fmt.Fprintf(&b, "\n### `%s` (%s), per case group\n\n", run.Agent, run.Mode)
		row(append([]string{"group", "cases"}, bs...)...)
		rule(2 + len(bs))
		for _, g := range abGroups {
			m := run.counts(g.id)
			total := 0
			for _, c := range m {
				total += c
			}
			cells := []string{g.id + " " + g.name, strconv.Itoa(total)}
			for _, x := range bs {
				cells = append(cells, strconv.Itoa(m[x]))
			}
			row(cells...)
		}
		var info []string
		for id, r := range run.Results {
			if r.Behavior == "INFORMATIONAL" || r.BehaviorClose == "INFORMATIONAL" {
				info = append(info, id)
			}
		}
		sort.Slice(info, func(i, j int) bool { return caseLess(info[i], info[j]) })
		if len(info) > 0 {
			fmt.Fprintf(&b, "\nINFORMATIONAL: %s.\n", strings.Join(info, ", "))
		}
		if fs := run.failures(); len(fs) > 0 {
			b.WriteString("\nFailing cases:\n\n")
			for _, v := range fs {
				b.WriteString("- " + strings.ReplaceAll(v.describe(run.Agent), "\n  ", "\n  - ") + "\n")
			}
		}
		for _, n := range run.Notes {
			b.WriteString("\nHarness note: " + oneLine(n) + "\n")
		}
	}
	return b.String()
}

// writeReport copies runs' results into dir, when set: the merged
// index.json of each mode (servers-index.json, clients-index.json), the
// reports of failing cases, and summary.md.
func writeReport(t testing.TB, dir, title, version string, runs []*abRun) {
	t.Helper()
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	byMode := map[string]abIndex{}
	for _, run := range runs {
		name := run.Mode + "s-index.json"
		if byMode[name] == nil {
			byMode[name] = abIndex{}
		}
		byMode[name][run.Agent] = run.Results
		for _, v := range run.failures() {
			src := filepath.Join(run.Dir, v.Result.ReportFile)
			if fi, err := os.Stat(src); err == nil && fi.Size() <= 1<<20 {
				copyFile(t, src, filepath.Join(dir, "failing", run.Mode+"-"+v.Result.ReportFile))
			}
		}
	}
	for name, idx := range byMode {
		b, err := json.MarshalIndent(idx, "", "   ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := fmt.Sprintf("# %s\n\nwstest: %s. Produced %s.\n\n%s", title, version, time.Now().UTC().Format("2006-01-02 15:04 UTC"), summary(runs))
	if err := os.WriteFile(filepath.Join(dir, "summary-"+runs[0].Mode+".md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report written to %s", dir)
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, b, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}

// abSlots bounds the wstest processes running at once, over both tests
// (which run in parallel). Each is one Python process, busy about 80% of
// the time (it waits for the echoes), so one more than the cores by
// default: on 2 cores, the five agents took 21m25s three at a time and
// 24m29s two at a time, for 38-40 CPU-minutes either way.
// GALE_AUTOBAHN_PARALLEL overrides it.
var abSlots = sync.OnceValue(func() chan struct{} {
	n := runtime.NumCPU() + 1
	if v, err := strconv.Atoi(os.Getenv("GALE_AUTOBAHN_PARALLEL")); err == nil && v > 0 {
		n = v
	}
	return make(chan struct{}, n)
})

// runParallel runs fs, each in a slot of abSlots, and waits for them all.
func runParallel(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			abSlots() <- struct{}{}
			defer func() { <-abSlots() }()
			f()
		}()
	}
	wg.Wait()
}

// abTimeout is the time the suite may take: the test's deadline less a
// margin for the reports, or 30 minutes.
func abTimeout(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return time.Until(d) - 2*time.Minute
	}
	return 30 * time.Minute
}
