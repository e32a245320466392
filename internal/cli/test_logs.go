package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// logStream prints the log lines of a run's task tries as they are
// stored (the worker ships a running try's every second, its end with the
// try's end), each prefixed by its task ("extract | ...", "fan[2] | ..." for a
// mapped instance, "load (try 2) | ..." after a retry), as `airflow dags
// test` prints the task logs, and those of the callbacks the run fires
// ("load on_failure | ..."). A line is printed once complete; Flush
// prints what remains of unfinished lines.
type logStream struct {
	logs    tasklog.Logs
	out     io.Writer
	offsets map[tasklog.Key]int64
	partial map[tasklog.Key][]byte
	labels  map[tasklog.Key]string
	seen    []tasklog.Key        // in the order first seen, for Flush
	ended   map[tasklog.Key]bool // tries that have ended: read once more, then done
	done    map[tasklog.Key]bool // tries that had ended when read to the end
	since   time.Time            // list instances changed since; zero = all
	// callbacks says whether the run's DAG declares callbacks: Poll then
	// prints the running ones' lines too.
	callbacks bool
}

// listSlack is how far before its last listing the stream lists changed
// task instances again: a change stamped before a listing may commit
// after it.
const listSlack = time.Second

func newLogStream(logs tasklog.Logs, out io.Writer) *logStream {
	return &logStream{logs: logs, out: out, offsets: map[tasklog.Key]int64{}, partial: map[tasklog.Key][]byte{},
		labels: map[tasklog.Key]string{}, ended: map[tasklog.Key]bool{}, done: map[tasklog.Key]bool{}}
}

// Poll prints the new complete lines of every try of the run's task
// instances. It lists only the instances changed since its last listing
// (a try starts, ends or is retried: each stamps updated_at) and reads the
// tries it knows of that are not done. A try that had ended when its log
// was read to the end is done: the worker sends a try's last lines before
// it reports its end, so the log cannot grow after that. Listing and
// reading every try on every wake-up made a chain's cost grow with the
// square of its length.
func (l *logStream) Poll(ctx context.Context, st store.Store, runID int64) error {
	start := time.Now()
	tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: runID, UpdatedSince: l.since})
	if err != nil {
		return fmt.Errorf("list task instances to stream their logs: %w", err)
	}
	l.since = start.Add(-listSlack)
	// Tries are seen once started, and those first seen together in the
	// order they started: an upstream's last lines come before its
	// downstream's first, whatever their task ids.
	slices.SortStableFunc(tis, func(a, b core.TaskInstance) int { return compareStarts(a.StartDate, b.StartDate) })
	for i := range tis {
		ti := &tis[i]
		key := tasklog.KeyOf(ti)
		for try := 1; try <= ti.TryNumber; try++ {
			if try == ti.TryNumber && ti.StartDate == nil {
				break // not started: seen once it starts (its start changes it)
			}
			key.TryNumber = try
			if _, ok := l.labels[key]; !ok {
				l.labels[key] = logLabel(ti, try)
				l.seen = append(l.seen, key)
			}
			l.ended[key] = try < ti.TryNumber || ti.State.Terminal()
		}
	}
	for _, key := range l.seen {
		if l.done[key] {
			continue
		}
		unreadable, err := l.readTry(ctx, key)
		if err != nil {
			return err
		}
		l.done[key] = l.ended[key] || unreadable
	}
	if l.callbacks {
		_, err := l.pollCallbacks(ctx, st, runID, runningCallbacks)
		return err
	}
	return nil
}

// compareStarts orders start dates, the unstarted last.
func compareStarts(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Compare(*b)
}

// PollAll is Poll listing every task instance of the run: the last poll,
// once the run has finished.
func (l *logStream) PollAll(ctx context.Context, st store.Store, runID int64) error {
	l.since = time.Time{}
	return l.Poll(ctx, st, runID)
}

// Callbacks prints what is left of the log lines of every attempt of the
// callbacks the run fired, which have ended by then (waitForRun), and
// returns them.
func (l *logStream) Callbacks(ctx context.Context, st store.Store, runID int64) ([]core.Callback, error) {
	return l.pollCallbacks(ctx, st, runID, nil)
}

// runningCallbacks are the states of the callbacks Poll follows: while the
// run goes on, those running (a few at a time: [callbacks] max_active); a
// callback that ran between two polls is printed by Callbacks, at the end.
var runningCallbacks = []core.CallbackState{core.CallbackRunning}

// pollCallbacks prints the new complete lines of the run's callbacks in
// states (nil: every state), each prefixed by what fired it ("load
// on_failure | ...", "(dag) on_success | ..."), and returns them. An
// attempt whose callback had ended, or that a later attempt followed, when
// its log was read to the end is done: a worker sends an attempt's last
// lines before it reports its end.
func (l *logStream) pollCallbacks(ctx context.Context, st store.Store, runID int64, states []core.CallbackState) ([]core.Callback, error) {
	cbs, err := st.CallbackList(ctx, &store.CallbackListParams{DagRunID: runID, States: states})
	if err != nil {
		return nil, fmt.Errorf("list the callbacks the run fired to print their logs: %w", err)
	}
	for i := range cbs {
		cb := &cbs[i]
		for attempt := 1; attempt <= cb.Attempts; attempt++ {
			key := tasklog.CallbackKey(cb, attempt)
			if _, ok := l.labels[key]; !ok {
				l.labels[key] = callbackLabel(cb, attempt)
				l.seen = append(l.seen, key)
			}
			if l.done[key] {
				continue
			}
			unreadable, err := l.readTry(ctx, key)
			if err != nil {
				return nil, err
			}
			l.done[key] = attempt < cb.Attempts || cb.State.Terminal() || unreadable
		}
	}
	return cbs, nil
}

// logLabel is the prefix of a try's lines.
func logLabel(ti *core.TaskInstance, try int) string {
	return tryLabel(ti.TaskID, ti.MapIndex, try)
}

// tryLabel names try of a task instance: "load", "fan[2]", "load (try 2)".
func tryLabel(taskID string, mapIndex, try int) string {
	label := taskID
	if mapIndex != core.NoMapIndex {
		label = fmt.Sprintf("%s[%d]", taskID, mapIndex)
	}
	if try > 1 {
		label = fmt.Sprintf("%s (try %d)", label, try)
	}
	return label
}

// callbackLabel names an attempt of a callback by what fired it and its
// event: "load on_failure", "(dag) on_success", "load on_retry (attempt 2)".
func callbackLabel(cb *core.Callback, attempt int) string {
	label := firedBy(cb) + " " + string(cb.Event)
	if attempt > 1 {
		label = fmt.Sprintf("%s (attempt %d)", label, attempt)
	}
	return label
}

// firedBy names the try that fired a task's callback ("load", "load (try
// 2)"), or "(dag)" for the run's.
func firedBy(cb *core.Callback) string {
	if cb.Level == core.CallbackTask {
		return tryLabel(cb.TaskID, cb.MapIndex, cb.TryNumber)
	}
	return "(dag)"
}

// readTry prints the complete lines key's log has gained. A log this
// process cannot read (with remote_base_log_folder, one a deployment's
// scheduler uploaded to where this machine does not reach) is said so
// once and no longer read (unreadable): the run goes on.
func (l *logStream) readTry(ctx context.Context, key tasklog.Key) (unreadable bool, err error) {
	label := l.labels[key]
	for {
		data, next, err := l.logs.Read(ctx, key, l.offsets[key])
		if tasklog.WroteNothing(err) {
			return false, nil // not written yet
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, err
			}
			_, werr := fmt.Fprintf(l.out, "%s | (the rest of this log cannot be read here: %v)\n", label, err)
			return true, werr
		}
		if len(data) == 0 {
			return false, nil
		}
		l.offsets[key] = next
		buf := append(l.partial[key], data...)
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if _, err := fmt.Fprintf(l.out, "%s | %s\n", label, buf[:i]); err != nil {
				return false, err
			}
			buf = buf[i+1:]
		}
		l.partial[key] = append([]byte(nil), buf...)
	}
}

// Flush prints every unfinished last line.
func (l *logStream) Flush() error {
	for _, key := range l.seen {
		if rest := l.partial[key]; len(rest) > 0 {
			if _, err := fmt.Fprintf(l.out, "%s | %s\n", l.labels[key], rest); err != nil {
				return err
			}
			l.partial[key] = nil
		}
	}
	return nil
}
