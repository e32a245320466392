//go:build !linux

package dirwatch

import (
	"io/fs"
	"time"
)

// changed is fi's modification time (the status-change time is read on
// Linux only, where moving a file in sets it).
func changed(fi fs.FileInfo) time.Time { return fi.ModTime() }
