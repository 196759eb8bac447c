//go:build !linux

package netconn

import (
	"io"
	"os"
)

func (c *Conn) sendFile(io.Reader) (int64, bool, error) { return 0, false, nil }

func (c *Conn) spliceTo(*os.File) (int64, bool, error) { return 0, false, nil }
