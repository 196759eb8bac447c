package poller

// Open returns the backend Auto picks here: OpenKind(Auto, p).
func Open(p Provider) (Backend, error) { return OpenKind(Auto, p) }

// OpenKind returns the backend k names, after the GALE_BACKEND override
// (Choose). On Linux, Auto is io_uring for a Transient provider's owner
// where io_uring works, and epoll otherwise (autoURing, open_linux.go),
// and IOURing fails, with an error wrapping ErrUnavailable, where
// io_uring cannot be used; on the BSDs and macOS, Auto is kqueue; on
// every other platform, Net. A backend this platform lacks fails with
// an error wrapping errors.ErrUnsupported.
func OpenKind(k Kind, p Provider) (Backend, error) {
	k, err := Choose(k)
	if err != nil {
		return nil, err
	}
	return openKind(k, p)
}
