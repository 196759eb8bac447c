package aio

import "sync"

// resultQueue carries completions from the loops to WaitIO. Loops push one
// batch per iteration; WaitIO swaps the whole queue out. A loop never
// waits for the consumer: the queue holds at most one entry per submitted
// request, so its size is bounded by what the caller submitted.
type resultQueue struct {
	mu    sync.Mutex
	items []*request
	ready chan struct{} // capacity 1: "items is not empty"
	// closed: no result is added any more, and take reports the close
	// once items is empty. close empties it at once (Close drops pending
	// results); closeDrained leaves what is queued to be taken.
	closed bool
}

func (q *resultQueue) push(batch []*request) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, batch...)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *resultQueue) push1(r *request) { q.push([]*request{r}) }

func (q *resultQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take swaps the queued requests for spare. ok is false once closed and
// empty.
func (q *resultQueue) take(spare []*request) (items []*request, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed && len(q.items) == 0 {
		return nil, false
	}
	items = q.items
	q.items = spare[:0]
	return items, true
}

// close closes q and drops what it holds.
func (q *resultQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
}

// closeDrained closes q, leaving what it holds to be taken.
func (q *resultQueue) closeDrained() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// WaitIO blocks until at least one request has completed, then returns
// every completion available. It returns ErrWatcherClosed once the watcher
// is closed.
//
// The returned slice, and the swap-buffer bytes its results point to, are
// valid until the next WaitIO call, which recycles them. WaitIO is meant
// for one consuming goroutine; concurrent calls are serialized, and each
// call ends the validity of the previous call's results, whoever made it.
func (w *watcher) WaitIO() ([]OpResult, error) {
	w.waitMu.Lock()
	defer w.waitMu.Unlock()
	w.recycle()
	for {
		items, ok := w.results.take(w.spare)
		if !ok {
			return nil, ErrWatcherClosed
		}
		if len(items) == 0 {
			w.spare = items
			select {
			case <-w.results.ready:
			case <-w.die:
			}
			continue
		}
		w.held = items
		return w.toResults(items), nil
	}
}

func (w *watcher) toResults(items []*request) []OpResult {
	res := w.res[:0]
	for _, r := range items {
		res = append(res, OpResult{
			Operation:    r.op(),
			Context:      r.ctx,
			Conn:         r.conn,
			Buffer:       r.buf,
			IsSwapBuffer: r.chunk != nil,
			Size:         r.size,
			Error:        r.err,
		})
	}
	w.res = res
	return res
}

// recycle ends the previous batch: swap-buffer space returns to its loop
// (waking readers that wait for it) and requests return to the pool.
func (w *watcher) recycle() {
	clear(w.res)
	for i, r := range w.held {
		if r.chunk != nil {
			r.chunk.refs.Add(-1)
			if lp := r.c.lp; lp.starving.Load() {
				lp.kick()
			}
		}
		w.pool.put(r)
		w.held[i] = nil
	}
	w.spare = w.held[:0]
	w.held = nil
}
