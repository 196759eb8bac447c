package aio

import (
	"testing"
	"time"
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
