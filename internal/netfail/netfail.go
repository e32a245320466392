// Package netfail classifies the errors of a network request (which may
// pass if the request is sent again) and waits between its tries.
package netfail

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// Transient says whether a request that failed with err may pass later: its
// connection was refused (a server restarting), reset or cut short, or it
// timed out. A certificate that is not trusted, a bad URL or a cancelled
// context is not transient.
func Transient(err error) bool {
	var nerr net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &nerr) && nerr.Timeout())
}

// Wait waits d before a request's next try; it returns false, sooner,
// when ctx ends first.
func Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
