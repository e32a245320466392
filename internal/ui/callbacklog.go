package ui

import (
	"context"
	"errors"
	"fmt"
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
	CB       core.Callback
	Attempt  int   // the attempt whose log is shown (0: none yet)
	Attempts []int // every attempt, for the links between them
	Log      string
	LogMore  bool
	TailURL  string // the REST API's log URL to tail from (set while the shown attempt runs)
	RunURL   string
	// A task's callback: its try's log and page.
	TryLog     string
	TryLogMore bool
	TryURL     string
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
		d.Log, d.LogMore = head.Text, head.More
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
		d.TryLog, d.TryLogMore = head.Text, head.More
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

// logHead is the start of a log as a page shows it.
type logHead struct {
	Text    string // the log's first chunk, or where the log is when Missing
	Next    int64  // the offset after Text: where a tail goes on
	More    bool   // the log is longer than Text
	Missing bool   // the log is not where this api-server reads logs
}

// tailable says whether a page may tail the log from Next: it shows the
// whole log written so far.
func (h logHead) tailable() bool { return !h.More && !h.Missing }

// logHead reads the first chunk of a log (empty when none was written).
func (u *UI) logHead(ctx context.Context, key tasklog.Key) (logHead, error) {
	data, next, err := u.cfg.Logs.Read(ctx, key, 0)
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
	size, err := u.cfg.Logs.Size(ctx, key)
	if err != nil {
		return logHead{}, err
	}
	return logHead{Text: string(data), Next: next, More: size > next}, nil
}
