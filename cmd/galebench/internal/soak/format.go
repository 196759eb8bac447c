package soak

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// fmtCount writes n with thousands separators: 1,234,567.
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}

// fmtBytes writes a byte count in binary units: 512 B, 1.5 KiB, 2.25 GiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	x, i := float64(n)/unit, 0
	for x >= unit && i < 3 {
		x /= unit
		i++
	}
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f %ciB", x, "KMGT"[i])
	}
	return fmt.Sprintf("%.2f %ciB", x, "KMGT"[i])
}

// fmtSeconds writes a duration in seconds as Go does: 10m0s, 2.5s.
func fmtSeconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}
