package netconn

import "github.com/galeio/gale/backend"

// LoopBackend returns the backend of the loop serving c.
func LoopBackend(c *Conn) backend.Kind { return c.lp.l.Kind() }
