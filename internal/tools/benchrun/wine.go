package benchrun

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Under Wine (Options.Wine) a server is a Windows program in a Linux
// process, and much of its work is done by another process: the prefix's
// wineserver, to which Wine hands every socket call's bookkeeping. Its
// CPU is the server's too while the server is the prefix's only program,
// as it is during a measurement. Wine is not Windows: its figures say
// how the servers compare with each other in one run, not what they cost
// on Windows.

// wineServer returns the PID of the wineserver of the prefix WINEPREFIX
// names (~/.wine by default), which a started Wine program has made.
func wineServer() (int, error) {
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		home, _ := os.UserHomeDir()
		prefix = filepath.Join(home, ".wine")
	}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "comm"))
		if strings.HasPrefix(string(comm), "wineserver") && wineEnv(pid, "WINEPREFIX") == prefix {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no wineserver runs for the Wine prefix %s", prefix)
}

// wineEnv returns the value of key in process pid's environment.
func wineEnv(pid int, key string) string {
	env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), key+"="); ok {
			return v
		}
	}
	return ""
}

// wineVersion returns what wine --version says, for the record.
func wineVersion() string {
	out, err := exec.Command("wine", "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
