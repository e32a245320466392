// Package weir is Weir's Go SDK: it lets a program define DAGs and tasks in
// Go, with the same fields, defaults and checks as YAML DAG files, and gives
// that program the whole weir command line (standalone, scheduler, worker,
// dags test, ...) with its DAGs and Go task functions compiled in.
//
//	func main() {
//		dag := weir.NewDAG("hello", weir.Schedule("@daily"), weir.StartDate(start))
//		greet := dag.Go("greet", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
//			return "hello from " + tc.RunID, nil
//		})
//		dag.Bash("echo", `echo {{ ti.xcom_pull(task_ids="greet") | shquote }}`, weir.DependsOn(greet))
//		weir.Main(dag)
//	}
//
// A Go task's return value (when not nil) becomes its return_value XCom; an
// error or a panic fails the try (and retries apply); ErrSkip skips it.
// docs/go-sdk.md is the guide.
package weir

import (
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/operator"
)

// ErrSkip is returned (or wrapped) by a Go task function to end the try as
// skipped instead of failed, like Airflow's AirflowSkipException.
var ErrSkip = operator.ErrSkipped

// NoRetry marks err, returned by a Go task function, as failing the task
// for good: it ends failed whatever retries it has left, like Airflow's
// AirflowFailException (for a bad input no retry can mend). The error is
// in the task log as usual.
func NoRetry(err error) error { return operator.NoRetry(err) }

// ErrNotFound is wrapped by the TaskContext helpers when a parameter, mapped
// argument, op_kwargs entry or XCom does not exist.
var ErrNotFound = core.ErrNotFound

// Errors the TaskContext helpers wrap as the server answers: ErrInvalid a
// bad request (an item that is not JSON, a field out of range),
// ErrConflict a state that refuses it (a push after the stream's close, an
// idempotency key reused with another partition), ErrForbidden what the
// try may not do (an event of an asset it does not declare).
var (
	ErrInvalid   = core.ErrInvalid
	ErrConflict  = core.ErrConflict
	ErrForbidden = core.ErrForbidden
)

// Rule is a trigger rule: when a task runs given its upstream tasks' states.
type Rule string

// Trigger rules, as in Airflow (see TriggerRule).
const (
	AllSuccess              = Rule(core.AllSuccess)
	AllFailed               = Rule(core.AllFailed)
	AllDone                 = Rule(core.AllDone)
	OneSuccess              = Rule(core.OneSuccess)
	OneFailed               = Rule(core.OneFailed)
	NoneFailed              = Rule(core.NoneFailed)
	NoneFailedMinOneSuccess = Rule(core.NoneFailedMinOneSuccess)
	NoneSkipped             = Rule(core.NoneSkipped)
	Always                  = Rule(core.Always)
)
