package loop

import "github.com/galeio/gale/internal/poller"

// Backend names the kernel interface of a loop. aio and engine export it
// as their own Backend type.
type Backend = poller.Kind

// The backends. Auto is io_uring where the kernel allows it for owners
// whose Provider is Transient, epoll otherwise on Linux, kqueue on the
// BSDs and macOS, and Net elsewhere (poller.OpenKind). GALE_BACKEND
// overrides the choice.
const (
	Auto    = poller.Auto
	Epoll   = poller.Epoll
	IOURing = poller.IOURing
	Kqueue  = poller.Kqueue
	Net     = poller.Net
)

// Opener opens a loop's backend; tests set Config.Open to one that
// injects faults.
type Opener = func(Provider) (poller.Backend, error)

// open opens the backend cfg asks for.
func open(cfg *Config) (poller.Backend, error) {
	if cfg.Open != nil {
		return cfg.Open(cfg.Provider)
	}
	be, err := poller.OpenKind(cfg.Backend, cfg.Provider)
	if err != nil {
		return nil, err
	}
	if zc, ok := be.(poller.ZeroCopier); ok && cfg.ZeroCopy > 0 {
		zc.SetZeroCopy(cfg.ZeroCopy)
	}
	return be, nil
}
