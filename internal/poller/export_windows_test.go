package poller

// Native reports whether be is an IOCP backend whose port serves tag
// (rather than its net backend inside).
func Native(be Backend, tag Tag) bool {
	b, ok := be.(*iocpBackend)
	if !ok {
		return false
	}
	sl := b.slot(tag)
	return sl != nil && sl.ent >= 0
}
