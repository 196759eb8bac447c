package main

import (
	"errors"
	"net/netip"

	"github.com/galeio/gale/httpd"
)

// errNoProxyProtocol is returned while httpd lacks PROXY protocol support.
var errNoProxyProtocol = errors.New("-proxy: this build of httpd has no PROXY protocol support")

// setProxyProtocol makes srv require a PROXY protocol header (v1 or v2)
// from the senders in list, comma-separated prefixes such as
// "127.0.0.1/32"; nothing when list is empty. With it, a request's
// RemoteAddr is the client's that HAProxy saw, not HAProxy's own.
//
// The field it sets, httpd.Server.ProxyProtocol, is not on branch main
// yet: until it is, a non-empty list is an error, and run.sh and the test
// configure HAProxy without send-proxy-v2.
func setProxyProtocol(srv *httpd.Server, list string) error {
	prefixes, err := parsePrefixes(list)
	if err != nil || len(prefixes) == 0 {
		return err
	}
	_ = srv
	return errNoProxyProtocol
}

// proxyProtocolSupported reports whether setProxyProtocol can act.
const proxyProtocolSupported = false

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
