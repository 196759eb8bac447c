package aio

import (
	"testing"
	"time"
	"unsafe"
)

// TestRequestDeadlineRecycled checks that a recycled request keeps its
// deadline timer (no allocation per request for programs that set
// deadlines) but not its deadline, and that a request without a deadline
// gets no timer.
func TestRequestDeadlineRecycled(t *testing.T) {
	var p reqPool
	r := p.get()
	r.setDeadline(time.Time{})
	if r.tm != nil {
		t.Fatalf("a request without a deadline has a timer")
	}
	d := time.Unix(1000, 0)
	r.setDeadline(d)
	if r.tm == nil || !r.tm.deadline.Equal(d) || r.tm.t.Fire == nil {
		t.Fatalf("setDeadline(%v): timer %+v, want one armed for it", d, r.tm)
	}
	tm := r.tm
	p.put(r)
	r = p.get()
	if r.tm != tm {
		t.Errorf("the recycled request lost its timer")
	}
	if !r.tm.deadline.IsZero() {
		t.Errorf("the recycled request kept the deadline %v", r.tm.deadline)
	}
	r.setDeadline(time.Time{})
	if !r.tm.deadline.IsZero() {
		t.Errorf("setDeadline(zero) left the deadline %v", r.tm.deadline)
	}
}

// TestRequestSize holds a request, which every pending read holds, and
// the watcher's conn, which every delegated connection holds, to their
// size classes: 128 and 192 bytes.
func TestRequestSize(t *testing.T) {
	if n := unsafe.Sizeof(request{}); n > 128 {
		t.Errorf("a request is %d bytes, want at most 128", n)
	}
	if n := unsafe.Sizeof(conn{}); n > 192 {
		t.Errorf("a conn is %d bytes, want at most 192", n)
	}
}
