package docstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goBlocks returns the ```go fenced blocks of doc that begin with
// "package main": the whole programs, which a reader can copy and run.
func goBlocks(doc string) []string {
	var progs []string
	for _, m := range regexp.MustCompile("(?ms)^```go\n(.*?)^```").FindAllStringSubmatch(doc, -1) {
		if strings.HasPrefix(m[1], "package main\n") {
			progs = append(progs, m[1])
		}
	}
	return progs
}

// Every whole program README.md shows builds against the module as it is:
// each is written to a directory of its own under testdata (inside the
// module, so that its imports resolve to this checkout) and vetted, all in
// one go command.
func TestREADMEExamples(t *testing.T) {
	progs := goBlocks(read(t, "README.md"))
	if len(progs) < 5 {
		t.Fatalf("README.md has %d whole programs (```go blocks starting with package main), want one per public package: 5", len(progs))
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH:", err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(dir)
		os.Remove("testdata") // if this test made it: Remove leaves a directory with files
	})
	var pkgs []string
	for i, p := range progs {
		sub := filepath.Join(dir, "ex"+string(rune('a'+i)))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "main.go"), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(sub))
	}
	out, err := exec.Command(gotool, append([]string{"vet"}, pkgs...)...).CombinedOutput()
	if err == nil {
		return
	}
	// Name each failing program by its line in README.md's block order.
	for i, p := range progs {
		if strings.Contains(string(out), "/ex"+string(rune('a'+i))+"/") {
			t.Errorf("README.md's program %d (%s ...) does not build", i+1, firstLines(p))
		}
	}
	t.Fatalf("go vet: %v\n%s", err, out)
}

// firstLines names a program by what follows its package clause: its first
// import or declaration line worth reading.
func firstLines(p string) string {
	for _, l := range strings.Split(p, "\n")[1:] {
		l = strings.TrimSpace(l)
		if strings.Contains(l, "galeio/gale/") {
			return l
		}
	}
	return "package main"
}

// Every relative link in README.md and docs/bench/figures.md names a file
// or directory that exists.
func TestREADMELinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, name := range []string{"README.md", "docs/bench/figures.md"} {
		for _, m := range link.FindAllStringSubmatch(read(t, name), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			path := filepath.Join(root, filepath.Dir(name), filepath.FromSlash(target))
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", name, m[1], err)
			}
		}
	}
}
