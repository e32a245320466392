package worker

import (
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/stateref"
)

// withStateBackend gives req the worker-side state backend (docs/requirements.md#be-2) for
// task and asset state, when one is configured: in-process tasks get the
// wrapped client, subprocesses the variables the in-task CLI reads, and
// the try log masks the backend's credentials.
func (w *Worker) withStateBackend(req *operator.Request, tc *execclient.Client, red *operator.Redactor) error {
	b := w.stateBackend
	if b == nil {
		return nil
	}
	for _, s := range b.Secrets() {
		red.Add(s)
	}
	st, err := stateref.New(tc, b.Store)
	if err != nil {
		return err
	}
	req.State = st
	req.Env = append(req.Env, b.TaskEnv()...)
	return nil
}
