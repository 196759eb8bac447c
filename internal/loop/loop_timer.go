package loop

import "time"

// Timer is a deadline owned by a loop. The zero value is ready to use; a
// Timer may be embedded in a pooled object and scheduled again after it
// fired or was stopped.
type Timer struct {
	when  time.Time
	index int // position in the heap plus one; 0 when not scheduled
	// Fire is called on the loop goroutine once the deadline has passed.
	Fire func(now time.Time)
}

// Scheduled reports whether t is waiting to fire.
func (t *Timer) Scheduled() bool { return t.index > 0 }

// timerHeap is a binary min-heap of timers ordered by deadline.
type timerHeap []*Timer

func (h timerHeap) less(i, j int) bool { return h[i].when.Before(h[j].when) }

func (h timerHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i+1, j+1
}

func (h *timerHeap) push(t *Timer) {
	*h = append(*h, t)
	t.index = len(*h)
	h.up(len(*h) - 1)
}

func (h *timerHeap) remove(t *Timer) {
	i := t.index - 1
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	t.index = 0
	if i != last {
		h.down(i)
		h.up(i)
	}
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h timerHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h.swap(i, c)
		i = c
	}
}

// Schedule arranges for t.Fire to run once the loop's clock reaches when,
// replacing any earlier schedule of t. Loop goroutine only.
func (l *Loop) Schedule(t *Timer, when time.Time) {
	if t.index > 0 {
		l.timers.remove(t)
	}
	t.when = when
	l.timers.push(t)
}

// Unschedule cancels t if it is waiting. Loop goroutine only.
func (l *Loop) Unschedule(t *Timer) {
	if t.index > 0 {
		l.timers.remove(t)
	}
}

// fireTimers runs every timer whose deadline is not after now.
func (l *Loop) fireTimers(now time.Time) {
	for len(l.timers) > 0 && !l.timers[0].when.After(now) {
		t := l.timers[0]
		l.timers.remove(t)
		t.Fire(now)
	}
}

// timeout is how long the loop may sleep before the next timer is due;
// negative means no timer is scheduled.
func (l *Loop) timeout(now time.Time) time.Duration {
	if len(l.timers) == 0 {
		return -1
	}
	return max(l.timers[0].when.Sub(now), 0)
}
