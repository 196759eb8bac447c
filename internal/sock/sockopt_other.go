//go:build unix && !linux

package sock

// keepAliveParams would hold the keep-alive timings; the portable x/sys
// API names them differently per BSD, so they are left as net sets them.
type keepAliveParams struct{}

func saveKeepAlive(fd int) keepAliveParams { return keepAliveParams{} }

func (keepAliveParams) restore(fd int) error { return nil }
