package restart

import "net"

// Listen returns the listener named name from inherited, and deletes it
// there so that it is used once; when inherited has none by that name (a
// first start), it listens anew with net.Listen(network, addr). inherited
// is what Take or SystemdNamed returned, or nil. The inherited listener is
// used whatever network and addr say: the process that passed it decided
// its address. Listen is not safe for concurrent use with the same map.
func Listen(inherited map[string]net.Listener, network, addr, name string) (net.Listener, error) {
	if ln, ok := inherited[name]; ok {
		delete(inherited, name)
		return ln, nil
	}
	return net.Listen(network, addr)
}
