package triggerer

import (
	"errors"
	"testing"
	"time"
)

// A poll that fails and the next that succeeds, both before the health
// report, still report the failure (with its own time): the watcher's
// health showed no trace of an error the next poll recovered from.
func TestPolledKeepsAnUnreportedError(t *testing.T) {
	w := &watch{t: &Triggerer{}, id: 7, typ: "command"}
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	w.Polled(t0, time.Millisecond, errors.New("exit status 7"))
	w.Polled(t0.Add(2*time.Second), time.Millisecond, nil)
	p := w.takeReport()
	if p == nil || p.Err != "exit status 7" || !p.ErrAt.Equal(t0) || !p.At.Equal(t0.Add(2*time.Second)) || p.ErrorsInRow != 0 {
		t.Fatalf("report after a failure then a success = %+v, want the error at t0, the poll at t0+2s, none in a row", p)
	}
	w.Polled(t0.Add(4*time.Second), time.Millisecond, nil)
	if p := w.takeReport(); p == nil || p.Err != "" {
		t.Errorf("the next report = %+v, want no error (it was reported)", p)
	}
}
