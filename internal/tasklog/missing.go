package tasklog

import (
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// MissingError is a read of a log that was stored but cannot be read
// here: the record of where it was stored exists, the log does not
// (another api-server's folder, a lost upload, a pruned log). Reason says
// where it went and what setting fixes it. It wraps core.ErrNotFound, but
// unlike a plain not-found (the try wrote nothing) it is never shown as an
// empty log (see WroteNothing).
type MissingError struct {
	Key    Key
	Reason string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("the log of dag_id %q run_id %q task_id %q map_index %d try %d %s",
		e.Key.DagID, e.Key.RunID, e.Key.TaskID, e.Key.MapIndex, e.Key.TryNumber, e.Reason)
}

// Unwrap makes a missing log match core.ErrNotFound.
func (e *MissingError) Unwrap() error { return core.ErrNotFound }

// WroteNothing reports whether err, from Logs.Read, means the try has
// written no log yet (an empty log to show), rather than a *MissingError
// or a failure.
func WroteNothing(err error) bool {
	var m *MissingError
	return errors.Is(err, core.ErrNotFound) && !errors.As(err, &m)
}
