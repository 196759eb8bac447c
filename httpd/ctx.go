package httpd

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// reqCtx is a request's context: the connection's context, canceled when
// the handler returns or the connection ends under it. It is one
// allocation per request, its Done channel made only if asked for.
type reqCtx struct {
	parent context.Context
	c      *conn
	mu     sync.Mutex
	done   chan struct{}
	err    error
}

func newReqCtx(c *conn) *reqCtx { return &reqCtx{parent: c.ctx, c: c} }

func (x *reqCtx) Deadline() (time.Time, bool) { return x.parent.Deadline() }

func (x *reqCtx) Done() <-chan struct{} { return x.doneChan() }

func (x *reqCtx) doneChan() chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done == nil {
		x.done = make(chan struct{})
		if x.err != nil {
			close(x.done)
		} else if pd := x.parent.Done(); pd != nil {
			go x.watch(pd)
		}
	}
	return x.done
}

// watch cancels x when its parent is canceled first.
func (x *reqCtx) watch(pd <-chan struct{}) {
	select {
	case <-pd:
		x.cancel(x.parent.Err())
	case <-x.done:
	}
}

func (x *reqCtx) Err() error {
	x.mu.Lock()
	err := x.err
	x.mu.Unlock()
	if err == nil {
		err = x.parent.Err()
	}
	return err
}

func (x *reqCtx) Value(key any) any {
	if key == http.LocalAddrContextKey {
		return x.c.ec.LocalAddr()
	}
	return x.parent.Value(key)
}

func (x *reqCtx) cancel(err error) {
	x.mu.Lock()
	if x.err == nil {
		x.err = err
		if x.done != nil {
			close(x.done)
		}
	}
	x.mu.Unlock()
}

func (x *reqCtx) String() string { return "httpd.requestContext" }
