package soak

import (
	"fmt"
	"slices"
	"strings"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/tools/benchrun"
)

// choose returns the servers named, in order, and those skipped because
// this machine lacks their backend, with the reason. With explicit, a
// missing backend is an error instead.
func choose(all []benchrun.Server, names []string, explicit bool) ([]benchrun.Server, map[string]string, error) {
	var chosen []benchrun.Server
	skipped := map[string]string{}
	for _, name := range names {
		i := slices.IndexFunc(all, func(s benchrun.Server) bool { return s.Name == name })
		if i < 0 {
			return nil, nil, fmt.Errorf("unknown server %q (have %s)", name, serverNames(all))
		}
		s := all[i]
		if err := backendAvailable(s.Backend); err != nil {
			if explicit {
				return nil, nil, fmt.Errorf("server %s: %v", name, err)
			}
			skipped[name] = err.Error()
			continue
		}
		chosen = append(chosen, s)
	}
	if len(chosen) == 0 {
		return nil, nil, fmt.Errorf("no server can run here: %v", skipped)
	}
	return chosen, skipped, nil
}

// backendAvailable reports whether this machine can run the backend
// named; "" is a server that is not gale's, which always can.
func backendAvailable(name string) error {
	if name == "" {
		return nil
	}
	k, err := poller.ParseKind(name)
	if err != nil {
		return err
	}
	return poller.Available(k)
}

func serverNames(all []benchrun.Server) string {
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
