//go:build !unix

package procfs

import "time"

// SelfCPU returns 0, as SelfCPU on Unix does when getrusage(2) fails:
// Windows and WebAssembly have no getrusage, and the measuring programs
// that call it run on Linux.
func SelfCPU() time.Duration { return 0 }
