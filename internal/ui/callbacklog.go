package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/tasklog"
)

// callbackRunTasksShown is how many of the run's task instances a DAG-level
// callback's page lists beside its log.
const callbackRunTasksShown = 100

// callbackData is the callback page's model: one attempt's log of the
// callback and, beside it, what it was fired for — the try's log for a
// task's callback, the run's task instances for the run's.
type callbackData struct {
	CB         core.Callback
	Attempt    int   // the attempt whose log is shown (0: none yet)
	Attempts   []int // every attempt, for the links between them
	Log        string
	LogSkipped int64  // bytes of the log's start not shown
	TailURL    string // the REST API's log URL to tail from (set while the shown attempt runs)
	RunURL     string
	// A task's callback: its try's log and page.
	TryLog        string
	TryLogSkipped int64
	TryURL        string
	// The run's callback: the run's task instances (the first
	// callbackRunTasksShown of RunTasksTotal).
	RunTasks      []tiRow
	RunTasksTotal int
}

// callbackPage shows one callback of a run (?attempt= picks the attempt,
// the latest by default): its event, state and error, its log, and beside
// it the log of the try it was fired for (a task's callback) or the run's
// task instances (the run's). The run page's Callbacks panel links here.
func (u *UI) callbackPage(w http.ResponseWriter, r *http.Request, req *request) {
	d, err := u.readCallback(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	u.render(w, r, http.StatusOK, "callback", req, fmt.Sprintf("callback %d", d.CB.ID), d)
}

// readCallback reads the path's callback, the chosen attempt's log and what
// is shown beside it.
func (u *UI) readCallback(r *http.Request) (*callbackData, error) {
	ctx := r.Context()
	dagID, runID, raw := r.PathValue("dag_id"), r.PathValue("run_id"), r.PathValue("callback_id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil, fmt.Errorf("%w: %w", &badParam{name: "callback id", value: raw, want: "a callback's number"}, core.ErrInvalid)
	}
	cb, err := u.st.CallbackGet(ctx, id)
	if err == nil && (cb.DagID != dagID || cb.RunID != runID) {
		err = fmt.Errorf("callback %d is not one of run %q of dag_id %q: %w", id, runID, dagID, core.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	d := &callbackData{CB: *cb, Attempt: cb.Attempts, RunURL: runPath(dagID, runID)}
	if s := r.URL.Query().Get("attempt"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > cb.Attempts {
			return nil, fmt.Errorf("%w: %w", &badParam{name: "attempt", value: s,
				want: fmt.Sprintf("an attempt of callback %d, 1 to %d", id, cb.Attempts)}, core.ErrInvalid)
		}
		d.Attempt = n
	}
	for n := 1; n <= cb.Attempts; n++ {
		d.Attempts = append(d.Attempts, n)
	}
	if d.Attempt > 0 {
		head, err := u.logHead(ctx, tasklog.CallbackKey(cb, d.Attempt))
		if err != nil {
			return nil, err
		}
		d.Log, d.LogSkipped = head.Text, head.Skipped
		if d.Attempt == cb.Attempts && cb.State == core.CallbackRunning && head.tailable() {
			d.TailURL = fmt.Sprintf("/api/v2/dags/%s/dagRuns/%s/callbacks/%d/logs?attempt=%d&token=%d",
				pathEscape(dagID), pathEscape(runID), cb.ID, d.Attempt, head.Next)
		}
	}
	if cb.Level == core.CallbackTask {
		key := core.TIKey{DagID: dagID, RunID: runID, TaskID: cb.TaskID, MapIndex: cb.MapIndex}
		q := "?try=" + strconv.Itoa(cb.TryNumber)
		if cb.MapIndex >= 0 {
			q += "&map_index=" + strconv.Itoa(cb.MapIndex)
		}
		d.TryURL = tiPath(key) + q
		head, err := u.logHead(ctx, tasklog.Key{DagID: dagID, RunID: runID, TaskID: cb.TaskID,
			MapIndex: cb.MapIndex, TryNumber: cb.TryNumber})
		d.TryLog, d.TryLogSkipped = head.Text, head.Skipped
		return d, err
	}
	p := &store.TaskInstanceListParams{DagRunID: cb.DagRunID, Page: store.Page{Limit: callbackRunTasksShown}}
	tis, total, err := store.List(ctx, p, u.st.TaskInstanceList, u.st.TaskInstanceCount)
	if err != nil {
		return nil, err
	}
	now := u.clk.Now()
	for _, ti := range tis {
		d.RunTasks = append(d.RunTasks, tiRow{TaskInstance: ti, Duration: span(ti.StartDate, ti.EndDate, now),
			Link: tiURL(core.TIKey{DagID: ti.DagID, RunID: ti.RunID, TaskID: ti.TaskID, MapIndex: ti.MapIndex})})
	}
	d.RunTasksTotal = total
	return d, nil
}

// logHead is a log as a page shows it: the whole log, or, past what a
// page holds (tasklog.MaxReadChunk), its end, where a failure says why.
type logHead struct {
	Text    string // the log, or its end; where the log is when Missing
	Next    int64  // the offset after Text: where a tail goes on
	Skipped int64  // bytes of the log's start not shown (whole lines)
	Missing bool   // the log is not where this api-server reads logs
}

// tailable says whether a page may tail the log from Next.
func (h logHead) tailable() bool { return !h.Missing }

// logHead reads a log's last chunk, from a line's start (empty when none
// was written).
func (u *UI) logHead(ctx context.Context, key tasklog.Key) (logHead, error) {
	size, err := u.cfg.Logs.Size(ctx, key)
	var missing *tasklog.MissingError
	if errors.As(err, &missing) {
		return logHead{Text: missing.Error(), Missing: true}, nil // where the log is, rather than an empty log
	}
	if tasklog.WroteNothing(err) {
		return logHead{}, nil
	}
	if err != nil {
		return logHead{}, err
	}
	from := max(size-tasklog.MaxReadChunk, 0)
	var data []byte
	next, err := tasklog.Each(ctx, u.cfg.Logs, key, from, size, func(p []byte) error { data = append(data, p...); return nil })
	if tasklog.WroteNothing(err) {
		return logHead{}, nil
	}
	if err != nil {
		return logHead{}, err
	}
	if from > 0 { // start at the first whole line
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data, from = data[i+1:], from+int64(i+1)
		}
	}
	return logHead{Text: string(data), Next: next, Skipped: from}, nil
}

// logDownload serves the whole log of a try (?try=, default the current
// one; ?map_index=) as a text file.
func (u *UI) logDownload(w http.ResponseWriter, r *http.Request, req *request) {
	key, ti, err := u.loadTI(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	lk := tasklog.KeyOf(ti)
	if s := r.URL.Query().Get("try"); s != "" {
		if lk.TryNumber, err = strconv.Atoi(s); err != nil || lk.TryNumber < 1 || lk.TryNumber > ti.TryNumber {
			u.failErr(w, r, req, badTry(ti.TryNumber, s))
			return
		}
	}
	if _, err := u.cfg.Logs.Size(r.Context(), lk); err != nil && !tasklog.WroteNothing(err) {
		u.failErr(w, r, req, err) // before the file's headers: a log kept elsewhere says where
		return
	}
	name := fmt.Sprintf("%s_%s_%s", key.DagID, key.RunID, key.TaskID)
	if key.MapIndex >= 0 {
		name += "_" + strconv.Itoa(key.MapIndex)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fmt.Sprintf("%s_try%d.log", name, lk.TryNumber)}))
	// A read that fails after the headers ends the file there.
	_, _ = tasklog.Each(r.Context(), u.cfg.Logs, lk, 0, -1, func(p []byte) error {
		_, err := w.Write(p) //nolint:gosec // a text/plain attachment, nosniff: never rendered as HTML
		return err
	})
}
