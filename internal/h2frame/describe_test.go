package h2frame_test

import (
	"fmt"
	"testing"

	"github.com/galeio/gale/internal/h2frame"
)

// describe renders f as the tests compare it, through its accessor.
func describe(t *testing.T, f h2frame.Frame) string {
	t.Helper()
	var s string
	var err error
	switch f.Type {
	case h2frame.TypeSettings:
		if f.Flags.Has(h2frame.FlagAck) {
			return "SETTINGS ack"
		}
		var all []h2frame.Setting
		err = f.Settings(func(st h2frame.Setting) error { all = append(all, st); return nil })
		s = fmt.Sprintf("SETTINGS %v", all)
	case h2frame.TypeHeaders:
		block, pri, e := f.Headers()
		s, err = fmt.Sprintf("HEADERS %d %q dep %d weight %d excl %v", f.StreamID, block, pri.DependsOn, pri.Weight, pri.Exclusive), e
	case h2frame.TypeContinuation:
		block, e := f.Continuation()
		s, err = fmt.Sprintf("CONTINUATION %d %q end %v", f.StreamID, block, f.Flags.Has(h2frame.FlagEndHeaders)), e
	case h2frame.TypeData:
		data, e := f.Data()
		s, err = fmt.Sprintf("DATA %d %q end %v", f.StreamID, data, f.Flags.Has(h2frame.FlagEndStream)), e
	case h2frame.TypePing:
		data, e := f.Ping()
		s, err = fmt.Sprintf("PING ack %v", data), e
		if !f.Flags.Has(h2frame.FlagAck) {
			s = fmt.Sprintf("PING %v", data)
		}
	case h2frame.TypeWindowUpdate:
		inc, e := f.WindowUpdate()
		s, err = fmt.Sprintf("WINDOW_UPDATE %d %d", f.StreamID, inc), e
	case h2frame.TypeRSTStream:
		code, e := f.RSTStream()
		s, err = fmt.Sprintf("RST_STREAM %d %v", f.StreamID, code), e
	case h2frame.TypePriority:
		pri, e := f.Priority()
		s, err = fmt.Sprintf("PRIORITY %d dep %d weight %d", f.StreamID, pri.DependsOn, pri.Weight), e
	case h2frame.TypeGoAway:
		last, code, debug, e := f.GoAway()
		s, err = fmt.Sprintf("GOAWAY %d %v %q", last, code, debug), e
	default:
		s = f.Type.String()
	}
	if err != nil {
		t.Fatalf("%v frame: %v", f.Type, err)
	}
	return s
}
