//go:build !unix

package sock

import "fmt"

// Relisten refuses to set a backlog here: the socket listens with the
// system's.
func Relisten(fd, backlog int) error {
	return fmt.Errorf("%w: %w", errNoRelisten, unsupportedOpt("listen backlog"))
}
