package tasklog

import (
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// TryKey returns the log key of try of ti, 0 meaning its current try. A
// try past the current one is an error wrapping core.ErrNotFound. The REST
// API and both transports of `weir tasks logs` pick a try's log with it.
func TryKey(ti *core.TaskInstance, try int) (Key, error) {
	if try > ti.TryNumber {
		return Key{}, fmt.Errorf("try_number %d of task_id %q (dag_id %q dag_run_id %q map_index %d) does not exist; the current try is %d: %w",
			try, ti.TaskID, ti.DagID, ti.RunID, ti.MapIndex, ti.TryNumber, core.ErrNotFound)
	}
	key := KeyOf(ti)
	if try > 0 {
		key.TryNumber = try
	}
	return key, nil
}

// AttemptKey returns the log key of attempt of cb, 0 meaning its latest.
// An attempt it has not had (or a callback that has had none) is an error
// wrapping core.ErrNotFound.
func AttemptKey(cb *core.Callback, attempt int) (Key, error) {
	n := attempt
	if n == 0 {
		n = cb.Attempts
	}
	if n < 1 || n > cb.Attempts {
		return Key{}, fmt.Errorf("callback %d has had %d attempts; attempt %d has no log: %w", cb.ID, cb.Attempts, n, core.ErrNotFound)
	}
	return CallbackKey(cb, n), nil
}
