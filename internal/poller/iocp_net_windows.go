package poller

// net returns the net backend that serves the tags whose sockets the
// port cannot take, opening it on first use. Its workers wake this
// backend's Wait, which then delivers their results (nb.Wait(0)).
func (b *iocpBackend) net() *netBackend {
	if b.nb == nil {
		be, _ := openNet(b.prov) // never fails
		b.nb = be.(*netBackend)
		b.nb.notify = func() { b.Wake() }
	}
	return b.nb
}
