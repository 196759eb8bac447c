package depstest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// policy lists, for every package of the module (by path relative to the
// module), the packages of the module it may import directly. Programs
// under bench/, cmd/ and examples/ are not listed: they may import
// anything. Rows for packages that do not exist yet state the design they
// must follow when they are added.
var policy = map[string][]string{
	// The backends' names, the one vocabulary the loops' options share:
	// a public leaf, the standard library alone, beneath every layer.
	"backend": {},
	// Socket system calls: the bottom layer.
	"internal/sock": {},
	// HTTP/2 frames read in place and appended: a leaf of the standard
	// library alone, for the HTTP server (issue 35).
	"internal/h2frame": {},
	// proxyproto reads PROXY protocol headers for the loops' listeners.
	"internal/proxyproto": {},
	// leaktest is for tests only: the standard library alone.
	"internal/testkit/leaktest": {},
	// benchtest is the std net client and echo server of the aio and
	// engine benchmarks: the standard library alone, for tests and
	// benchmarks only.
	"internal/testkit/benchtest": {},
	// backendtest runs a test once per backend this machine has: tests
	// only.
	"internal/testkit/backendtest": {"internal/poller", "internal/sock"},
	// faulttest injects system-call failures through internal/sock's
	// hook: tests only.
	"internal/testkit/faulttest": {"internal/poller", "internal/sock"},
	// floodtest is the line examples' hostile-client test, for tests
	// only: it samples the heap with leaktest.
	"internal/testkit/floodtest": {"internal/testkit/leaktest"},
	// stresstest is the client side of the stress tests aio and engine
	// share (churn, slowloris, hostile clients, fault storms): tests only.
	"internal/testkit/stresstest": {"internal/testkit/backendtest", "internal/testkit/faulttest", "internal/testkit/leaktest"},
	// benchrun is galebench's machinery, shared by cmd/galebench and the
	// bench module: a program in all but name, it runs gale's public APIs
	// as echo servers. It lives in internal/tools, not under
	// cmd/galebench/internal, because the bench module imports it too.
	// tlstest gives its TLS servers and clients their certificates,
	// h2frame its HTTP/2 idle clients their frames.
	"internal/tools/benchrun": {"aio", "backend", "engine", "netconn", "internal/h2frame", "internal/tools/procfs", "internal/testkit/tlstest"},
	// tlstest makes test certificates: the standard library alone; for
	// tests and benchmarks (benchrun's TLS servers).
	"internal/testkit/tlstest": {},
	// procfs reads processes' CPU, memory and descriptors from /proc for
	// the measuring programs: the standard library alone.
	"internal/tools/procfs": {},
	// io_uring ring layer, beside the readiness pollers.
	"internal/uring": {"internal/sock"},
	// epoll and kqueue backends, and the io_uring backend over the ring.
	"internal/poller": {"backend", "internal/sock", "internal/uring"},
	// Event loops: connections, timers, tasks, buffers.
	"internal/loop": {"internal/goid", "internal/poller", "internal/sock"},

	// tooltest finds the external programs conformance tests drive: tests
	// only, the standard library alone.
	"internal/testkit/tooltest": {},

	// tlsrec lets a loop drive a standard tls.Conn (engine's TLS): the
	// standard library alone.
	"internal/tlsrec": {},

	// connslot is engine's slot for the protocol layers over it (httpd's
	// upgraded Protocol), apart from the user's Context.
	"internal/connslot": {},
	// goid tells a loop's or a worker's own goroutine from others: the
	// standard library alone.
	"internal/goid": {},
	// workpool runs pooled callbacks (engine.Pool): the standard library
	// and goid.
	"internal/workpool": {"internal/goid"},

	// The two public APIs on the loops.
	"aio":    {"backend", "internal/loop", "internal/sock"},
	"engine": {"backend", "internal/connslot", "internal/loop", "internal/proxyproto", "internal/sock", "internal/tlsrec", "internal/workpool"},

	// Later: net.Conn and net.Listener drop-ins, then protocols.
	"netconn":   {"backend", "engine", "internal/loop", "internal/sock"},
	"httpd":     {"engine", "internal/connslot", "internal/h2frame", "internal/proxyproto", "netconn"},
	"websocket": {"engine", "httpd", "internal/workpool"},
	// websocket/gorilla is gorilla/websocket's blocking API over
	// websocket's callbacks.
	"websocket/gorilla": {"engine", "websocket"},
	// restart hands listeners over between processes (systemd, a Unix
	// control socket): the standard library alone, for any net.Listener.
	"restart": {},
	// http1 is httpd's former name, forwarding to it.
	"http1": {"engine", "httpd"},
	// metrics exposes the counters of the layers above as Prometheus
	// text and expvar JSON: the standard library alone besides.
	"metrics": {"engine", "httpd", "websocket"},

	// This test's own package, and the front documents' checks.
	"internal/depstest": {},
	"internal/docstest": {},
	"internal/apitest":  {},
}

// programDirs hold programs and benchmarks, which may import anything.
var programDirs = []string{"bench", "cmd", "examples"}

// publicAPIs may be imported only by programs and by the rows of policy
// that name them.
var publicAPIs = []string{"aio", "backend", "engine", "netconn", "httpd", "http1", "restart", "websocket", "websocket/gorilla", "metrics"}

// sockExternal is all internal/sock may import from outside the standard
// library: the system calls of Unix and of Windows.
var sockExternal = []string{"golang.org/x/sys/unix", "golang.org/x/sys/windows"}

// coreModules are the only modules besides the standard library and gale
// itself that the core may depend on.
var coreModules = []string{"golang.org/x/sys"}

// protocolModules are what the protocol layers (protocolPkgs) may depend
// on besides: well-kept golang.org/x modules (x/net's httpguts has
// net/http's own token rules, and needs x/text). metrics, over httpd and
// websocket, gets them through those and adds none of its own.
var (
	protocolPkgs    = []string{"httpd", "http1", "websocket", "websocket/gorilla", "metrics"}
	protocolModules = []string{"golang.org/x/sys", "golang.org/x/net", "golang.org/x/text"}
)

// goosList are the systems whose builds are checked: those CI vets.
var goosList = []string{"linux", "darwin", "freebsd", "netbsd", "openbsd", "windows"}

// pkg is the part of `go list -json` output the checks read.
type pkg struct {
	ImportPath string
	Standard   bool
	DepOnly    bool
	Module     *struct {
		Path string
		Main bool
	}
	Imports []string
	Deps    []string
	Error   *struct{ Err string }
}

func TestDependencyPolicy(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	root, modPath := module(t, goCmd)
	for _, goos := range goosList {
		t.Run(goos, func(t *testing.T) {
			pkgs := list(t, goCmd, root, goos)
			for _, v := range check(modPath, pkgs) {
				t.Error(v)
			}
		})
	}
}

// module returns the module's root directory and path.
func module(t *testing.T, goCmd string) (root, path string) {
	t.Helper()
	cmd := exec.Command(goCmd, "list", "-m", "-f", "{{.Dir}}\n{{.Path}}")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m: %v\n%s", err, stderr(err))
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("go list -m printed %q, want a directory and a module path", out)
	}
	return f[0], f[1]
}

// list runs go list -deps for every package of the module, built for goos.
func list(t *testing.T, goCmd, root, goos string) map[string]*pkg {
	t.Helper()
	cmd := exec.Command(goCmd, "list", "-e", "-deps",
		"-json=ImportPath,Standard,DepOnly,Module,Imports,Deps,Error", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOOS="+goos, "GOARCH=amd64")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, stderr(err))
	}
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

func stderr(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}

// check returns one message per violation of the policy by the packages
// of module modPath in pkgs (go list -deps output, by import path).
func check(modPath string, pkgs map[string]*pkg) []string {
	var bad []string
	report := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	// The table itself: every allowed import must be a row.
	for _, name := range sortedKeys(policy) {
		for _, dep := range policy[name] {
			if _, ok := policy[dep]; !ok {
				report("policy row %q allows %q, which has no row of its own", name, dep)
			}
		}
	}

	inModule := func(path string) (rel string, ok bool) {
		if path == modPath {
			return "", true
		}
		rel, ok = strings.CutPrefix(path, modPath+"/")
		return rel, ok
	}
	for _, path := range sortedKeys(pkgs) {
		p := pkgs[path]
		rel, ok := inModule(path)
		if !ok {
			continue
		}
		if p.Error != nil {
			report("%s: %s", path, p.Error.Err)
			continue
		}
		if isProgram(rel) {
			continue
		}
		allowed, listed := policy[rel]
		if !listed {
			report("package %s is not in the dependency policy: add a row for %q to the policy table in internal/depstest/deps_test.go, listing the packages of the module it may import (see DESIGN.md, Layers)", path, rel)
			continue
		}
		for _, imp := range p.Imports {
			if irel, ok := inModule(imp); ok {
				switch {
				case isProgram(irel):
					report("%s imports program package %s: only programs may import programs", path, imp)
				case slices.Contains(publicAPIs, irel) && !slices.Contains(allowed, irel):
					report("%s imports the public API %s: only programs (bench/, cmd/, examples/), tests and the layers the policy names may", path, imp)
				case !slices.Contains(allowed, irel):
					report("%s imports %s, which its policy row does not allow (allowed: %v)", path, imp, allowed)
				}
				continue
			}
			if ip := pkgs[imp]; ip != nil && ip.Standard {
				continue
			}
			if rel == "internal/sock" && !slices.Contains(sockExternal, imp) {
				report("%s imports %s: internal/sock may import only the standard library and %v", path, imp, sockExternal)
			}
		}
		// The core's whole dependency graph stays within std, the module
		// and the allowed modules.
		for _, dep := range p.Deps {
			d := pkgs[dep]
			if d == nil {
				report("%s depends on %s, which go list did not describe", path, dep)
				continue
			}
			if d.Standard {
				continue
			}
			if _, ok := inModule(dep); ok {
				continue
			}
			mod := "(no module)"
			if d.Module != nil {
				mod = d.Module.Path
			}
			allowed := coreModules
			if slices.Contains(protocolPkgs, rel) {
				allowed = protocolModules
			}
			if !slices.Contains(allowed, mod) {
				report("core package %s depends on %s from module %s: it may depend only on the standard library and %v", path, dep, mod, allowed)
			}
		}
	}
	return bad
}

func isProgram(rel string) bool {
	for _, dir := range programDirs {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestPolicyChecks feeds check made-up module graphs, to show each rule
// catches what it should and passes what it should.
func TestPolicyChecks(t *testing.T) {
	const mod = "example.com/gale"
	std := func(path string) *pkg { return &pkg{ImportPath: path, Standard: true} }
	ext := func(path, module string) *pkg {
		p := &pkg{ImportPath: path}
		p.Module = &struct {
			Path string
			Main bool
		}{Path: module}
		return p
	}
	own := func(rel string, imports ...string) *pkg {
		p := ext(mod+"/"+rel, mod)
		p.Module.Main = true
		for _, imp := range imports {
			if !strings.Contains(imp, ".") && imp != "os" && imp != "net" {
				imp = mod + "/" + imp // a module package, by relative path
			}
			p.Imports = append(p.Imports, imp)
		}
		return p
	}
	graph := func(ps ...*pkg) map[string]*pkg {
		m := map[string]*pkg{"net": std("net"), "os": std("os")}
		for _, p := range ps {
			m[p.ImportPath] = p
		}
		// Deps: the transitive closure of Imports.
		var deps func(path string, seen map[string]bool)
		deps = func(path string, seen map[string]bool) {
			if p := m[path]; p != nil {
				for _, imp := range p.Imports {
					if !seen[imp] {
						seen[imp] = true
						deps(imp, seen)
					}
				}
			}
		}
		for _, p := range m {
			seen := map[string]bool{}
			deps(p.ImportPath, seen)
			p.Deps = sortedKeys(seen)
		}
		return m
	}
	unix := ext("golang.org/x/sys/unix", "golang.org/x/sys")
	cpu := ext("golang.org/x/sys/cpu", "golang.org/x/sys")
	good := []*pkg{
		unix,
		own("internal/sock", "golang.org/x/sys/unix", "os"),
		own("internal/poller", "internal/sock", "golang.org/x/sys/unix"),
		own("internal/loop", "internal/poller", "golang.org/x/sys/cpu"),
		cpu,
		own("aio", "internal/loop", "internal/sock", "net"),
		own("examples/echo", "aio", "example.org/anything"),
		ext("example.org/anything", "example.org/anything"),
		own("cmd/galebench", "aio", "internal/loop"),
	}
	for _, tc := range []struct {
		name  string
		extra []*pkg
		want  string // substring of the one expected violation; "" for none
	}{
		{"layered module", nil, ""},
		{"upward import", []*pkg{own("internal/sock", "internal/loop")}, "does not allow"},
		{"sock uses another x/sys package", []*pkg{own("internal/sock", "golang.org/x/sys/cpu")}, "internal/sock may import only"},
		{"loop imports aio", []*pkg{own("internal/loop", "aio")}, "public API"},
		{"engine imports aio", []*pkg{own("engine", "internal/loop", "aio")}, "public API"},
		{"netconn imports engine", []*pkg{own("engine", "internal/loop"), own("netconn", "engine")}, ""},
		{"websocket imports aio", []*pkg{own("engine", "internal/loop"), own("websocket", "engine", "aio")}, "public API"},
		{"core imports an outside module", []*pkg{own("aio", "internal/loop", "example.org/anything")}, "may depend only on"},
		{"core imports a program", []*pkg{own("aio", "internal/loop", "cmd/galebench")}, "program package"},
		{"unlisted package", []*pkg{own("internal/newthing", "internal/sock")}, "not in the dependency policy"},
		{"unlisted root package", []*pkg{own("", "aio")}, "not in the dependency policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := slices.Clone(good)
			ps = append(ps, tc.extra...) // later entries replace earlier ones
			if tc.name == "unlisted root package" {
				ps[len(ps)-1].ImportPath = mod
			}
			got := check(mod, graph(ps...))
			switch {
			case tc.want == "" && len(got) != 0:
				t.Fatalf("check = %q, want no violation", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Fatalf("check = %q, want one violation mentioning %q", got, tc.want)
			}
		})
	}
}
