package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// logStream prints the log lines of a run's task tries as they are
// written, each prefixed by its task ("extract | ...", "fan[2] | ..." for a
// mapped instance, "load (try 2) | ..." after a retry), as `airflow dags
// test` prints the task logs. A line is printed once complete; Flush
// prints what remains of unfinished lines.
type logStream struct {
	base    string
	out     io.Writer
	offsets map[tasklog.Key]int64
	partial map[tasklog.Key][]byte
	labels  map[tasklog.Key]string
	seen    []tasklog.Key        // in the order first seen, for Flush
	read    map[tasklog.Key]bool // tries that ended and were read to the end
}

func newLogStream(base string, out io.Writer) *logStream {
	return &logStream{base: base, out: out, offsets: map[tasklog.Key]int64{}, partial: map[tasklog.Key][]byte{},
		labels: map[tasklog.Key]string{}, read: map[tasklog.Key]bool{}}
}

// Poll prints the new complete lines of every try of the run's task
// instances. A try that had ended when its log was read to the end is not
// read again: the worker sends a try's last lines before it reports its
// end, so the log cannot grow after that (re-reading every finished try
// on every wake-up made a chain's cost grow with the square of its length).
func (l *logStream) Poll(ctx context.Context, st store.Store, runID int64) error {
	tis, err := st.TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: runID})
	if err != nil {
		return fmt.Errorf("list task instances to stream their logs: %w", err)
	}
	for i := range tis {
		ti := &tis[i]
		key := tasklog.KeyOf(ti)
		for try := 1; try <= ti.TryNumber; try++ {
			key.TryNumber = try
			if l.read[key] {
				continue
			}
			if err := l.readTry(key, logLabel(ti, try)); err != nil {
				return err
			}
			l.read[key] = try < ti.TryNumber || ti.State.Terminal()
		}
	}
	return nil
}

// logLabel is the prefix of a try's lines.
func logLabel(ti *core.TaskInstance, try int) string {
	label := ti.TaskID
	if ti.MapIndex != core.NoMapIndex {
		label = fmt.Sprintf("%s[%d]", ti.TaskID, ti.MapIndex)
	}
	if try > 1 {
		label = fmt.Sprintf("%s (try %d)", label, try)
	}
	return label
}

// readTry prints the complete lines key's log has gained.
func (l *logStream) readTry(key tasklog.Key, label string) error {
	if _, ok := l.labels[key]; !ok {
		l.labels[key] = label
		l.seen = append(l.seen, key)
	}
	for {
		data, next, err := tasklog.Read(l.base, key, l.offsets[key])
		if errors.Is(err, core.ErrNotFound) {
			return nil // not written yet
		}
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return nil
		}
		l.offsets[key] = next
		buf := append(l.partial[key], data...)
		for {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				break
			}
			if _, err := fmt.Fprintf(l.out, "%s | %s\n", label, buf[:i]); err != nil {
				return err
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
