package main

import (
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/galeio/gale/internal/benchrun"
)

// cepollSource is the C reference server: see cepoll/cepoll.c.
//
//go:embed cepoll/cepoll.c
var cepollSource []byte

var cepoll = benchrun.Server{Name: "cepoll", Serve: serveCepoll,
	Note: "C reference (cepoll/cepoll.c, cc -O2): a thread per CPU, each with its own SO_REUSEPORT listener and level-triggered epoll, 64 KiB buffer, pending output kept per connection"}

// serveCepoll builds the C server (once per version of its source) and
// replaces this process with it, so that the process the suite measures
// by pid is the C server itself. The C server listens on ln's port,
// prints the address on stdout once it listens (ready is not called from
// Go), and exits when stdin ends, as the suite expects of a child.
func serveCepoll(ln net.Listener, _ func(net.Addr)) error {
	bin, err := buildCepoll()
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
	return syscall.Exec(bin, []string{"cepoll", port}, os.Environ())
}

// buildCepoll compiles cepoll.c with cc into the user's cache directory,
// unless the binary for this very source is there already, and returns
// its path. The binary's name carries a hash of the source, so a changed
// source is rebuilt.
func buildCepoll() (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", errors.New("cepoll needs a C compiler: cc is not in PATH")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "gale-bench")
	sum := sha256.Sum256(cepollSource)
	bin := filepath.Join(dir, fmt.Sprintf("cepoll-%x", sum[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := bin + ".c"
	if err := os.WriteFile(src, cepollSource, 0o644); err != nil {
		return "", err
	}
	// Build under a temporary name and rename, so that a binary at bin is
	// always complete.
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	out, err := exec.Command(cc, "-O2", "-pthread", "-o", tmp, src).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("cepoll: cc: %v\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}
