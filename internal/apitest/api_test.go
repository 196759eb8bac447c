package apitest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// public lists the public packages, by path in the module: every package
// but internal/, cmd/, examples/ and bench/ ones. TestPublicListed keeps
// the list whole.
var public = []string{"aio", "backend", "engine", "http1", "httpd", "metrics", "netconn", "restart", "websocket", "websocket/gorilla"}

// TestNoInternalTypes fails on every exported identifier of the public
// packages whose signature names an internal type.
func TestNoInternalTypes(t *testing.T) {
	api := load(t)
	for _, e := range api.entries {
		if len(e.internal) > 0 {
			t.Errorf("%s: names internal %s", e.line, strings.Join(e.internal, ", "))
		}
	}
}

// TestPublicListed fails if the module has a package that is neither
// listed in public nor under internal/, cmd/, examples/ or bench/.
func TestPublicListed(t *testing.T) {
	api := load(t)
	for _, path := range api.all {
		rel := strings.TrimPrefix(path, api.modPath+"/")
		if rel == path || slices.Contains(public, rel) {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if !slices.Contains([]string{"internal", "cmd", "examples", "bench"}, top) {
			t.Errorf("package %s is public but not in apitest's public list", rel)
		}
	}
}

// apiData is the walk of the public packages.
type apiData struct {
	root, modPath string
	all           []string // every package of the module
	entries       []entry
}

var (
	loadOnce sync.Once
	loaded   *apiData
	loadErr  error
	skip     string
)

// load loads and walks the public packages once for all tests.
func load(t *testing.T) *apiData {
	t.Helper()
	loadOnce.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			skip = fmt.Sprintf("no go command: %v", err)
			return
		}
		loaded, loadErr = loadAPI(goCmd)
	})
	if skip != "" {
		t.Skip(skip)
	}
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loaded
}

// listed is the part of go list's output load reads.
type listed struct {
	ImportPath string
	Export     string
	DepOnly    bool
	Module     *struct{ Path string }
}

func loadAPI(goCmd string) (*apiData, error) {
	out, err := goList(goCmd, "", "list", "-m", "-f", "{{.Dir}}\n{{.Path}}")
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return nil, fmt.Errorf("go list -m printed %q, want a directory and a module path", out)
	}
	api := &apiData{root: f[0], modPath: f[1]}
	out, err = goList(goCmd, api.root, "list", "-export", "-deps",
		"-json=ImportPath,Export,DepOnly,Module", "./...")
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding go list output: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.Module != nil && p.Module.Path == api.modPath {
			api.all = append(api.all, p.ImportPath)
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file := exports[path]
		if file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	for _, rel := range public {
		pkg, err := imp.Import(api.modPath + "/" + rel)
		if err != nil {
			return nil, err
		}
		api.entries = append(api.entries, walk(pkg, api.modPath)...)
	}
	return api, nil
}

// goList runs the go command in dir for linux/amd64, the platform of the
// golden file.
func goList(goCmd, dir string, args ...string) ([]byte, error) {
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOOS=linux", "GOARCH=amd64")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		return nil, fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
	}
	return out, nil
}
