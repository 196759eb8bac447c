//go:build !linux

package benchrun

import "errors"

var errPin = errors.New("-pin is supported on Linux only")

func pinProcess([]int) error { return errPin }

func pinClient() error { return errPin }
