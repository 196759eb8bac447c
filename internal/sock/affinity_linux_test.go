package sock_test

import (
	"testing"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// TestSetAffinity pins a goroutine's thread to one CPU the process may use.
// The goroutine keeps its locked thread, which ends with it.
func TestSetAffinity(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	cpu := -1
	for i := range 1024 {
		if allowed.IsSet(i) {
			cpu = i
			break
		}
	}
	if cpu < 0 {
		t.Skip("no CPU in the affinity mask")
	}
	type result struct {
		err   error
		count int
		isSet bool
	}
	done := make(chan result)
	go func() {
		var r result
		r.err = sock.SetAffinity(cpu)
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(0, &got); err == nil {
			r.count, r.isSet = got.Count(), got.IsSet(cpu)
		}
		done <- r
	}()
	r := <-done
	if r.err != nil {
		t.Fatalf("SetAffinity(%d) = %v", cpu, r.err)
	}
	if r.count != 1 || !r.isSet {
		t.Fatalf("thread affinity after SetAffinity(%d): %d CPUs, includes %d: %v; want exactly that CPU", cpu, r.count, cpu, r.isSet)
	}
}
