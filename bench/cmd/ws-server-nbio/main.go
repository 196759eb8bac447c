// Command ws-server-nbio is the bench's ws-server subcommand with nbio's
// server alone linked in: ws-scale -lean runs it, so that each server
// process's own memory is what a program serving WebSockets with nbio
// holds, not the bench binary's (which links every peer library).
package main

import (
	"fmt"
	"os"

	"github.com/galeio/gale/bench/internal/wsnbio"
	"github.com/galeio/gale/bench/internal/wsserve"
)

func main() {
	err := wsserve.Main(os.Args[1:], "nbio", func(lib string) (wsserve.Serve, error) {
		if lib != "nbio" {
			return nil, fmt.Errorf("-lib %q: this binary serves nbio only", lib)
		}
		return wsnbio.Serve, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ws-server-nbio:", err)
		os.Exit(1)
	}
}
