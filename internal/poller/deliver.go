//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package poller

// completions is what every backend delivers outside the handling of an
// event or a kernel completion: results known at submission (a receive
// with data waiting, an empty send), cancellations, and receives it
// serves at delivery. Owner goroutine only.
type completions struct {
	// ready holds completions made outside event or completion handling;
	// spare is its double buffer.
	ready, spare []Completion
	// later holds tags whose receive is served at delivery (drain's
	// serve): a provided buffer is then taken, filled and handed to the
	// callback with no other receive in between, so a Provider may reuse
	// its space as soon as the callback returns.
	later []Tag
	// cur holds a completion while its callback runs: passing the address
	// of a local to a function value would move it to the heap on every
	// receive. Callbacks never reenter delivery, so one suffices.
	cur Completion
}

// maxRounds bounds the rounds of one drain. An owner that resubmits its
// receive from the callback on a socket whose peer never pauses would
// otherwise keep the loop in one drain (and its tasks, timers and other
// descriptors waiting) for as long as data comes; what is left waits for
// the next Wait, which then does not block.
const maxRounds = 16

// drain serves the receives in later, by calling serve for each tag, and
// hands the ready completions to fn, until both are empty or maxRounds
// rounds were made: callbacks, and serve, may add to either.
func (q *completions) drain(fn func(*Completion), serve func(Tag, func(*Completion))) {
	for round := 0; round < maxRounds && (len(q.ready) > 0 || len(q.later) > 0); round++ {
		n := len(q.later)
		for i := range n {
			serve(q.later[i], fn)
		}
		// serve may append: those wait for the next round.
		q.later = q.later[:copy(q.later, q.later[n:])]
		batch := q.ready
		q.ready = q.spare[:0]
		for i := range batch {
			fn(&batch[i])
			batch[i] = Completion{}
		}
		q.spare = batch[:0]
	}
}

// pending reports whether drain has anything to do.
func (q *completions) pending() bool { return len(q.ready) > 0 || len(q.later) > 0 }

// deliver hands c to fn.
func (q *completions) deliver(c Completion, fn func(*Completion)) {
	q.cur = c
	fn(&q.cur)
	q.cur = Completion{}
}
