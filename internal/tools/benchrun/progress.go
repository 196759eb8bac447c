package benchrun

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress shows where the suite stands: on a terminal one line rewritten
// in place, elsewhere a line per step.
type progress struct {
	w          io.Writer
	tty        bool
	total, n   int
	start      time.Time
	lineActive bool
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// step announces the next measurement.
func (p *progress) step(format string, args ...any) {
	p.n++
	if p.w == nil {
		return
	}
	msg := fmt.Sprintf("[%d/%d %s", p.n, p.total, p.eta()) + "] " + fmt.Sprintf(format, args...)
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K"+msg)
		p.lineActive = true
		return
	}
	fmt.Fprintln(p.w, msg)
}

// skip counts a measurement that will not run.
func (p *progress) skip() { p.n++ }

// printf prints a line that stays.
func (p *progress) printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	if p.lineActive {
		fmt.Fprint(p.w, "\r\033[K")
		p.lineActive = false
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *progress) done() {
	if p.w != nil && p.lineActive {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// eta estimates the time left from the pace so far.
func (p *progress) eta() string {
	elapsed := time.Since(p.start)
	if p.n <= 1 {
		return "elapsed 0s"
	}
	left := elapsed / time.Duration(p.n-1) * time.Duration(p.total-p.n+1)
	return fmt.Sprintf("elapsed %s, ~%s left", elapsed.Round(time.Second), left.Round(time.Second))
}
