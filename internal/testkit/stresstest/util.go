package stresstest

import "os"

// long reports whether the long versions of the runs are asked for
// (GALE_LONG=1); by default they run at a size CI affords.
func long() bool { return os.Getenv("GALE_LONG") == "1" }

// mib converts bytes to MiB, for logs.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
