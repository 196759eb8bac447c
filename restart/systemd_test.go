//go:build unix

package restart_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/restart"
)

func init() { childModes["systemd"] = systemdChild }

// systemdChild is a process socket-activated by TestSystemd: it reports
// what Systemd gave it, and answers one connection on "http".
func systemdChild() int {
	lns, err := restart.SystemdNamed()
	env := os.Getenv("LISTEN_PID") + os.Getenv("LISTEN_FDS") + os.Getenv("LISTEN_FDNAMES")
	fmt.Printf("listeners=%d err=%v env=%q\n", len(lns), err, env)
	ln := lns["http"]
	if ln == nil {
		return 0
	}
	defer ln.Close()
	fmt.Printf("cloexec=%v\n", cloexec(ln))
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("accept:", err)
		return 1
	}
	io.WriteString(c, "hello from the activated child\n")
	c.Close()
	return 0
}

// cloexec reports whether ln's descriptor is close-on-exec.
func cloexec(ln net.Listener) bool {
	raw, _ := ln.(syscall.Conn).SyscallConn()
	var set bool
	raw.Control(func(fd uintptr) { set = fdCloexec(int(fd)) })
	return set
}

// TestSystemd activates a re-executed test binary as systemd does: a
// listener at descriptor 3, LISTEN_FDS=1, LISTEN_FDNAMES=http, and
// LISTEN_PID set to the child's own pid by the shell that execs it. The
// child must find the listener by name, unset the variables, and serve
// on it. With a LISTEN_PID that is not the child's, it must take none.
func TestSystemd(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set LISTEN_PID to the child's pid:", err)
	}
	for _, tc := range []struct {
		name, pid string
		want      string
	}{
		{"own pid", "$$", `listeners=1 err=<nil> env=""`},
		{"another pid", "1", `listeners=0 err=<nil> env=""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			f, err := ln.(*net.TCPListener).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd := exec.Command(sh, "-c", `LISTEN_PID=`+tc.pid+` exec "$0" -test.run=^$`, os.Args[0])
			cmd.Env = append(os.Environ(), childEnv+"=systemd", "LISTEN_FDS=1", "LISTEN_FDNAMES=http")
			cmd.ExtraFiles = []*os.File{f}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			r := bufio.NewReader(out)
			line, _ := r.ReadString('\n')
			if got := strings.TrimSpace(line); got != tc.want {
				t.Fatalf("child: %s, want %s", got, tc.want)
			}
			if tc.pid != "$$" {
				return
			}
			if line, _ := r.ReadString('\n'); strings.TrimSpace(line) != "cloexec=true" {
				t.Errorf("child: %s, want cloexec=true", strings.TrimSpace(line))
			}
			c, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			got, _ := bufio.NewReader(c).ReadString('\n')
			if got != "hello from the activated child\n" {
				t.Errorf("the activated child answered %q", got)
			}
		})
	}
}
