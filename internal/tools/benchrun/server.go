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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/tools/procfs"
)

// childOptions are the child's flags.
type childOptions struct {
	cpu                    int      // CPU to pin to, or -1
	cpuProfile, memProfile string   // profile paths, already made per run
	tls                    keyFiles // a TLS server's certificate and key
}

// runChild is the child's side: listen on loopback, print the address on
// stdout once the server accepts there, and serve. Commands come on
// stdin, one a line, each answered with one line on stdout: "heap" writes
// the heap profile and answers "ok"; "goroutines" answers the count of
// goroutines (runtime.NumGoroutine, this command reader included);
// "stacks PATH" writes every goroutine's stack to PATH and answers "ok".
// End of file (the parent is done, or gone) stops the CPU profile and
// exits.
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
	ready := func(a net.Addr) { fmt.Println(a) }
	if s.TLS() {
		kp, err := o.tls.read()
		if err != nil {
			return fmt.Errorf("TLS server %s: %w", s.Name, err)
		}
		return s.ServeTLS(ln, kp, ready)
	}
	if s.ServeHTTP != nil {
		return s.ServeHTTP(ln, ready)
	}
	if s.ServeH2 != nil {
		return s.ServeH2(ln, ready)
	}
	return s.Serve(ln, ready)
}

func childCommands(o childOptions) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "heap":
			if err := writeHeapProfile(o.memProfile); err != nil {
				fmt.Fprintln(os.Stderr, "heap profile:", err)
			}
			fmt.Println("ok")
		case "goroutines":
			fmt.Println(runtime.NumGoroutine())
		default:
			if path, ok := strings.CutPrefix(in.Text(), "stacks "); ok {
				if err := writeStacks(path); err != nil {
					fmt.Fprintln(os.Stderr, "stacks:", err)
				}
				fmt.Println("ok")
			}
		}
	}
	pprof.StopCPUProfile()
	os.Exit(0)
}

// writeStacks writes every goroutine's stack to path, as a panic would
// print them.
func writeStacks(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("goroutine").WriteTo(f, 2), f.Close())
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

// Child is a server running in a child process: this binary re-executed
// with -serve NAME, which the command's main must hand to Main. Its
// methods are for one goroutine at a time.
type Child struct {
	cmd     *exec.Cmd
	wine    int // the wineserver's PID, for a child under Wine; 0 otherwise
	addr    string
	in      io.WriteCloser
	out     *bufio.Reader
	profile bool // the child writes a heap profile when asked
}

// StartChild starts server s in a child process, without profiling, and
// returns once it accepts connections.
func StartChild(s Server) (*Child, error) {
	return startChild(s, []string{"-serve", s.Name}, false, "")
}

// startServer starts s in a child process for case c.
func startServer(s Server, c Case, o Options) (*Child, error) {
	args := []string{"-serve", s.Name}
	if o.Pin {
		args = append(args, "-pin-cpu", "0")
	}
	if s.TLS() {
		args = append(args, "-tls-cert", o.tls.cert, "-tls-key", o.tls.key)
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
	return startChild(s, args, s.Gale && o.MemProfile != "", o.Wine)
}

// startChild runs this binary with args, or the Windows build wine under
// wine, and reads the address the server prints once it accepts.
func startChild(s Server, args []string, profile bool, wine string) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if wine != "" {
		exe, args = "wine", append([]string{wine}, args...)
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
	ch := &Child{cmd: cmd, in: in, out: bufio.NewReader(out), profile: profile}
	line, err := ch.out.ReadString('\n')
	if err != nil {
		in.Close()
		cmd.Wait()
		return nil, fmt.Errorf("server %s did not start: %w; it said: %q", s.Name, err, tail.String())
	}
	ch.addr = strings.TrimSpace(line)
	if wine != "" {
		if ch.wine, err = wineServer(); err != nil {
			ch.Stop()
			return nil, err
		}
	}
	return ch, nil
}

// profilePath adds the server and case to a profile's file name:
// cpu.prof becomes cpu-engine-pingpong-50x4.prof.
func profilePath(path, server string, c Case) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + server + "-" + c.Key() + ext
}

// Addr is the address the server accepts on, such as 127.0.0.1:41234.
func (ch *Child) Addr() string { return ch.addr }

// PID is the child's process ID, for /proc. Under Wine it is the Linux
// process the Windows program runs in (wine execs into it).
func (ch *Child) PID() int { return ch.cmd.Process.Pid }

// CPU returns the CPU time the server has used: the child's, and under
// Wine its wineserver's besides.
func (ch *Child) CPU() (time.Duration, error) {
	d, err := procfs.CPU(ch.PID())
	if err != nil || ch.wine == 0 {
		return d, err
	}
	w, err := procfs.CPU(ch.wine)
	return d + w, err
}

// atPeak is called by a scenario when the server holds the most: with
// -memprofile the child writes its heap profile then.
func (ch *Child) atPeak() error {
	if !ch.profile {
		return nil
	}
	ch.profile = false
	_, err := ch.ask("heap")
	return err
}

// Goroutines asks the child for its count of goroutines, which includes
// the one that answers.
func (ch *Child) Goroutines() (int, error) {
	line, err := ch.ask("goroutines")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(line)
}

// ask sends a command and returns the child's one-line answer.
func (ch *Child) ask(cmd string) (string, error) {
	if _, err := io.WriteString(ch.in, cmd+"\n"); err != nil {
		return "", err
	}
	line, err := ch.out.ReadString('\n')
	return strings.TrimSpace(line), err
}

// WriteStacks has the child write every goroutine's stack to path, to
// show where a leak stands.
func (ch *Child) WriteStacks(path string) error {
	_, err := ch.ask("stacks " + path)
	return err
}

// dump asks the server to print its goroutines (SIGQUIT makes the Go
// runtime do so on stderr, which the child shares) and waits for it to exit.
func (ch *Child) dump() {
	ch.cmd.Process.Signal(syscall.SIGQUIT)
	ch.cmd.Wait()
}

// Stop ends the child: it exits at the end of its stdin. It returns the
// child's exit error, if any.
func (ch *Child) Stop() error {
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
