package tasklog

import (
	"bytes"
	"fmt"
	"strings"

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

// TryWriting reports whether the try whose log key names may still add to
// it: ti's current try, not started yet, running or deferred (it resumes).
// A finished try, or one waiting to retry, writes no more.
func TryWriting(ti *core.TaskInstance, key Key) bool {
	if ti.TryNumber != key.TryNumber {
		return false
	}
	switch ti.State {
	case core.TINone, core.TIScheduled, core.TIQueued, core.TIRunning, core.TIDeferred: // a deferred try resumes, writing on
		return true
	default:
		return false
	}
}

// AttemptWriting reports whether the callback attempt key names may still
// add to its log: cb's latest attempt, while it runs.
func AttemptWriting(cb *core.Callback, key Key) bool {
	return cb.Attempts == key.TryNumber && cb.State == core.CallbackRunning
}

// Lines splits a piece of a log into its lines, without their line
// breaks, and says how many bytes at its end it left for a later piece. A
// piece ends at a line break, but for the end of a log that grows no more
// (final, with nothing beyond the piece). A piece without any line break
// is a part of a line longer than a piece when the log holds more beyond
// it; else it is a line being written, left whole for later.
func Lines(data []byte, final, beyond bool) (lines []string, rest int) {
	lines = []string{}
	if len(data) > 0 && data[len(data)-1] != '\n' && (!final || beyond) {
		switch i := bytes.LastIndexByte(data, '\n'); {
		case i >= 0:
			rest, data = len(data)-i-1, data[:i+1]
		case !beyond:
			return lines, len(data)
		}
	}
	if len(data) == 0 {
		return lines, rest
	}
	return append(lines, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")...), rest
}
