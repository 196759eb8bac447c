// Command ws-server-gale is the bench's ws-server subcommand with gale's
// server alone linked in: ws-scale -lean runs it, so that each server
// process's own memory is what a program serving WebSockets with gale
// holds, not the bench binary's (which links every peer library).
package main

import (
	"fmt"
	"os"

	"github.com/galeio/gale/bench/internal/wsgale"
	"github.com/galeio/gale/bench/internal/wsserve"
)

func main() {
	err := wsserve.Main(os.Args[1:], "gale", func(lib string) (wsserve.Serve, error) {
		if lib != "gale" {
			return nil, fmt.Errorf("-lib %q: this binary serves gale only", lib)
		}
		return wsgale.Serve, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ws-server-gale:", err)
		os.Exit(1)
	}
}
