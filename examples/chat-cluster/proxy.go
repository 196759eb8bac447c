package main

import (
	"net/netip"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// setProxyProtocol makes srv require a PROXY protocol header (v1 or v2)
// from the senders in list, comma-separated prefixes such as
// "127.0.0.1/32" (HAProxy's send-proxy-v2); nothing when list is empty.
// With it, a request's RemoteAddr is the client's that HAProxy saw, not
// HAProxy's own. HAProxy's health checks carry a header too (a LOCAL
// one: the connection keeps its own addresses).
func setProxyProtocol(srv *httpd.Server, list string) error {
	prefixes, err := parsePrefixes(list)
	if err != nil || len(prefixes) == 0 {
		return err
	}
	srv.ProxyProtocol = &engine.ProxyProtocol{Trusted: prefixes}
	return nil
}

func parsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range splitList(list) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
