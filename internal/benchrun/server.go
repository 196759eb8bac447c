package benchrun

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
)

// childOptions are the child's flags.
type childOptions struct {
	cpu                    int    // CPU to pin to, or -1
	cpuProfile, memProfile string // profile paths, already made per run
}

// runChild is the child's side: listen on loopback, print the address on
// stdout once the server accepts there, and serve. Commands come on
// stdin: "heap" writes the heap profile and answers "ok"; end of file (the
// parent is done, or gone) stops the CPU profile and exits.
func runChild(servers []Server, name string, o childOptions) error {
	s, err := find(servers, name)
	if err != nil {
		return err
	}
	if o.cpu >= 0 {
		if err := pinProcess([]int{o.cpu}); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	go childCommands(o)
	return s.Serve(ln, func(a net.Addr) { fmt.Println(a) })
}

func childCommands(o childOptions) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "heap" {
			if err := writeHeapProfile(o.memProfile); err != nil {
				fmt.Fprintln(os.Stderr, "heap profile:", err)
			}
			fmt.Println("ok")
		}
	}
	pprof.StopCPUProfile()
	os.Exit(0)
}

func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	return errors.Join(pprof.WriteHeapProfile(f), f.Close())
}

// child is a running server process.
type child struct {
	cmd     *exec.Cmd
	addr    string
	in      io.WriteCloser
	out     *bufio.Reader
	profile bool // the child writes a heap profile when asked
}

// startServer starts s in a child process for case c.
func startServer(s Server, c Case, o Options) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve", s.Name}
	if o.Pin {
		args = append(args, "-pin-cpu", "0")
	}
	if s.Gale && o.CPUProfile != "" {
		args = append(args, "-cpuprofile", profilePath(o.CPUProfile, s.Name, c))
	}
	if s.Gale && o.MemProfile != "" {
		args = append(args, "-memprofile", profilePath(o.MemProfile, s.Name, c))
	}
	for _, p := range []string{o.CPUProfile, o.MemProfile} {
		if p != "" {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
		}
	}
	cmd := exec.Command(exe, args...)
	tail := &tailWriter{}
	cmd.Stderr = io.MultiWriter(os.Stderr, tail)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ch := &child{cmd: cmd, in: in, out: bufio.NewReader(out), profile: s.Gale && o.MemProfile != ""}
	line, err := ch.out.ReadString('\n')
	if err != nil {
		in.Close()
		cmd.Wait()
		return nil, fmt.Errorf("server %s did not start: %w; it said: %q", s.Name, err, tail.String())
	}
	ch.addr = strings.TrimSpace(line)
	return ch, nil
}

// profilePath adds the server and case to a profile's file name:
// cpu.prof becomes cpu-engine-pingpong-50x4.prof.
func profilePath(path, server string, c Case) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + server + "-" + c.Key() + ext
}

func (ch *child) pid() int { return ch.cmd.Process.Pid }

// atPeak is called by a scenario when the server holds the most: with
// -memprofile the child writes its heap profile then.
func (ch *child) atPeak() error {
	if !ch.profile {
		return nil
	}
	ch.profile = false
	if _, err := io.WriteString(ch.in, "heap\n"); err != nil {
		return err
	}
	_, err := ch.out.ReadString('\n')
	return err
}

// dump asks the server to print its goroutines (SIGQUIT makes the Go
// runtime do so on stderr, which the child shares) and waits for it to exit.
func (ch *child) dump() {
	ch.cmd.Process.Signal(syscall.SIGQUIT)
	ch.cmd.Wait()
}

func (ch *child) stop() error {
	ch.in.Close()
	return ch.cmd.Wait()
}

// tailWriter keeps the last bytes written to it, so that a child's error
// message can go into the record of its failure.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 512

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
