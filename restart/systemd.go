package restart

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The environment of socket activation (sd_listen_fds(3)): the process
// the descriptors are for, how many there are from listenFDsStart on, and
// their names, separated by colons (FileDescriptorName= in the socket
// unit).
const (
	envPID          = "LISTEN_PID"
	envFDs          = "LISTEN_FDS"
	envNames        = "LISTEN_FDNAMES"
	listenFDsStart  = 3
	maxSystemdFiles = 1 << 12 // more is a broken environment, not a unit's
)

// systemd holds the result of reading the environment, which happens once:
// it is unset then, and the descriptors are ours.
var systemd struct {
	once  sync.Once
	lns   []net.Listener
	names []string
	err   error
}

// Systemd returns the listeners systemd passed to this process (socket
// activation), in the order of the socket unit, or none when it passed
// none (LISTEN_PID is not this process's). The first call reads the
// environment, sets the descriptors close-on-exec and unsets LISTEN_PID,
// LISTEN_FDS and LISTEN_FDNAMES, so that children do not inherit them;
// later calls return the same listeners. The caller owns them. Safe from
// any goroutine. A descriptor that is no stream listener (a datagram
// socket, a FIFO) fails the call with an error naming it; on Windows,
// where there is no socket activation, the environment fails it with an
// error wrapping errors.ErrUnsupported.
func Systemd() ([]net.Listener, error) {
	systemd.once.Do(readSystemd)
	return systemd.lns, systemd.err
}

// SystemdNamed is Systemd by name (LISTEN_FDNAMES), ready for Listen. A
// name given twice fails it (a unit with two unnamed sockets: name them
// with FileDescriptorName=).
func SystemdNamed() (map[string]net.Listener, error) {
	systemd.once.Do(readSystemd)
	if systemd.err != nil {
		return nil, systemd.err
	}
	m := make(map[string]net.Listener, len(systemd.lns))
	for i, ln := range systemd.lns {
		name := systemd.names[i]
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("restart: systemd passed two listeners named %q (LISTEN_FDNAMES)", name)
		}
		m[name] = ln
	}
	return m, nil
}

// readSystemd fills systemd from the environment, and unsets it.
func readSystemd() {
	n, names, err := systemdEnv(os.Getpid())
	os.Unsetenv(envPID)
	os.Unsetenv(envFDs)
	os.Unsetenv(envNames)
	if err != nil || n == 0 {
		systemd.err = err
		return
	}
	systemd.names = names
	systemd.lns, systemd.err = inheritFDs(listenFDsStart, names)
}

// systemdEnv parses the environment for process pid: how many
// descriptors it was passed, and their names ("unknown" where none is
// given, as sd_listen_fds_with_names(3) says).
func systemdEnv(pid int) (int, []string, error) {
	p, ok := os.LookupEnv(envPID)
	if !ok || p != strconv.Itoa(pid) {
		return 0, nil, nil // not ours (a parent's, passed on by mistake)
	}
	n, err := strconv.Atoi(os.Getenv(envFDs))
	if err != nil || n < 0 || n > maxSystemdFiles {
		return 0, nil, fmt.Errorf("restart: bad %s=%q", envFDs, os.Getenv(envFDs))
	}
	names := make([]string, n)
	given := strings.Split(os.Getenv(envNames), ":")
	for i := range names {
		names[i] = "unknown"
		if i < len(given) && given[i] != "" && os.Getenv(envNames) != "" {
			names[i] = given[i]
		}
	}
	return n, names, nil
}
