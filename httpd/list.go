package httpd

// connList is the set of loop-served connections, for Shutdown and
// Close: a list threaded through the connections themselves, so that an
// idle connection pays two pointers for its place rather than a map
// entry. Guarded by Server.mu.
type connList struct {
	head *conn
	n    int
}

// links is a connection's place in its server's connList.
type links struct {
	prev, next *conn
}

func (l *connList) add(c *conn) {
	c.links = links{next: l.head}
	if l.head != nil {
		l.head.links.prev = c
	}
	l.head = c
	l.n++
}

// remove takes c out, and reports whether it was in.
func (l *connList) remove(c *conn) bool {
	if c.links.prev == nil && l.head != c {
		return false
	}
	if p := c.links.prev; p != nil {
		p.links.next = c.links.next
	} else {
		l.head = c.links.next
	}
	if n := c.links.next; n != nil {
		n.links.prev = c.links.prev
	}
	c.links = links{}
	l.n--
	return true
}

// all returns the connections in a new slice.
func (l *connList) all() []*conn {
	out := make([]*conn, 0, l.n)
	for c := l.head; c != nil; c = c.links.next {
		out = append(out, c)
	}
	return out
}
