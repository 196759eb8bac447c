package main

import (
	"crypto/sha256"
	"embed"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/galeio/gale/internal/tools/benchrun"
)

// csrcs holds the C reference servers' sources: NAME/NAME.c for each
// server NAME, and csrv/csrv.h, which they share.
//
//go:embed cepoll/cepoll.c curing/curing.c csrv/csrv.h
var csrcs embed.FS

// cServer is the C reference server name, built from name/name.c.
func cServer(name, note string) benchrun.Server {
	return benchrun.Server{Name: name, Note: note,
		Serve: func(ln net.Listener, _ func(net.Addr)) error { return serveC(name, ln) }}
}

// serveC builds the C server name (once per version of its sources) and
// replaces this process with it, so that the process the suite measures
// by pid is the C server itself. The C server listens on ln's port,
// prints the address on stdout once it listens (ready is not called from
// Go), and exits when stdin ends, as the suite expects of a child.
func serveC(name string, ln net.Listener) error {
	bin, err := buildC(name)
	if err != nil {
		return err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// Close ln so that the C server can bind the port: a closed listening
	// socket leaves nothing behind, and the parent dials only once the C
	// server has printed the address.
	if err := ln.Close(); err != nil {
		return err
	}
	return syscall.Exec(bin, []string{name, port}, os.Environ())
}

// buildC compiles name/name.c with cc into the user's cache directory,
// unless the binary for these very sources is there already, and returns
// its path. The binary's name carries a hash of the sources, so a changed
// source is rebuilt. The sources are written beside it, under NAME-HASH.src,
// as they are laid out here, so that the includes find csrv/csrv.h.
func buildC(name string) (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", fmt.Errorf("%s needs a C compiler: cc is not in PATH", name)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	files := []string{name + "/" + name + ".c", "csrv/csrv.h"}
	srcs := make([][]byte, len(files))
	h := sha256.New()
	for i, f := range files {
		if srcs[i], err = csrcs.ReadFile(f); err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(srcs[i]))
		h.Write(srcs[i])
	}
	dir := filepath.Join(cache, "gale-bench")
	bin := filepath.Join(dir, fmt.Sprintf("%s-%x", name, h.Sum(nil)[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	srcDir := bin + ".src"
	for i, f := range files {
		p := filepath.Join(srcDir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, srcs[i], 0o644); err != nil {
			return "", err
		}
	}
	// Build under a temporary name and rename, so that a binary at bin is
	// always complete.
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	out, err := exec.Command(cc, "-O2", "-pthread", "-o", tmp, filepath.Join(srcDir, filepath.FromSlash(files[0]))).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s: cc: %v\n%s", name, err, out)
	}
	return bin, os.Rename(tmp, bin)
}
