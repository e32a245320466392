package dirwatch

import (
	"io/fs"
	"syscall"
	"time"
)

// changed is the later of fi's modification and status-change times: a
// rename or a move into the folder sets the latter only.
func changed(fi fs.FileInfo) time.Time {
	t := fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); c.After(t) {
			return c
		}
	}
	return t
}
