package benchrun

import "fmt"

// Case is one scenario at one size: what a row of the report measures.
type Case struct {
	Scenario string `json:"scenario"` // stream, pingpong, conns or idle
	Conns    int    `json:"conns"`    // connections
	Size     int    `json:"size"`     // bytes per message (write, for stream)
}

const (
	streamChunk = 64 << 10 // stream's write size
	connsSize   = 1 << 10  // conns' message size
)

// Key names the case in file names and JSON: stream, pingpong-50x4,
// conns-8192, idle-10000.
func (c Case) Key() string {
	switch c.Scenario {
	case "stream":
		return "stream"
	case "pingpong":
		return fmt.Sprintf("pingpong-%dx%d", c.Conns, c.Size)
	}
	return fmt.Sprintf("%s-%d", c.Scenario, c.Conns)
}

// Title describes the case for people.
func (c Case) Title() string {
	switch c.Scenario {
	case "stream":
		return "stream: 1 conn, 64 KiB writes echoed"
	case "pingpong":
		return fmt.Sprintf("pingpong: %s conns × %s, closed loop", count(c.Conns), size(c.Size))
	case "conns":
		return fmt.Sprintf("conns: %s conns each echo 1 KiB per round", count(c.Conns))
	}
	return fmt.Sprintf("idle: %s idle conns", count(c.Conns))
}

// Unit is the unit of the case's headline figure.
func (c Case) Unit() string {
	switch c.Scenario {
	case "stream":
		return "MB/s"
	case "pingpong":
		return "msg/s"
	case "conns":
		return "ms/round"
	}
	return "B/conn"
}

// LowerIsBetter reports whether smaller headline figures are better.
func (c Case) LowerIsBetter() bool { return c.Scenario == "conns" || c.Scenario == "idle" }

// count writes n with thousands separators: 19,000.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
