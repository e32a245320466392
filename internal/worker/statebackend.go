package worker

import (
	"log/slog"

	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
)

// withStateBackend gives req the worker-side state backend (docs/requirements.md#be-2) for
// task and asset state, when one is configured: in-process tasks get the
// wrapped client, subprocesses the variables the in-task CLI reads, and
// the try log masks the backend's credentials. Failed object deletes are
// reported in the try log.
func (w *Worker) withStateBackend(req *operator.Request, tc *execclient.Client, red *operator.Redactor) error {
	b := w.stateBackend
	if b == nil {
		return nil
	}
	for _, s := range b.Secrets() {
		red.Add(s)
	}
	ti := req.TI
	log := slog.New(slog.NewTextHandler(red, nil)).With("dag_id", ti.DagID, "run_id", ti.RunID,
		"task_id", ti.TaskID, "map_index", ti.MapIndex, "try", ti.TryNumber)
	st, err := stateref.New(tc, b.Store, log)
	if err != nil {
		return err
	}
	req.State = st
	req.Env = append(req.Env, b.TaskEnv()...)
	return nil
}
