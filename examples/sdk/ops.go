package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir"
)

// goOpsAlerts is the asset a failed run of go_ops_failing_load emits an
// event of, from its DAG-level failure callback.
var goOpsAlerts = weir.Asset("go_ops_alerts", weir.AssetURI("ops://go_alerts"))

// opsFailingLoadDAG is examples/dags/ops_failing_load.yaml in Go, with Go
// callbacks (docs/go-sdk.md#callbacks): load fails when the run's conf
// says {"fail": true}, is retried once (an OnRetry callback logs it), and
// when the run fails its OnRunFailure callback emits an event of
// go_ops_alerts keyed by the failed run, which starts go_ops_responder.
func opsFailingLoadDAG() *weir.DAG {
	dag := weir.NewDAG("go_ops_failing_load",
		weir.Description("A load that fails on demand; its run's failure callback alerts go_ops_responder."),
		weir.Tags("example", "go", "callbacks"),
		weir.Params(map[string]any{"fail": false}),
		weir.OnRunFailure(func(ctx context.Context, cc *weir.CallbackContext) error {
			rec, err := cc.Emit(ctx, goOpsAlerts, weir.PartitionKey(cc.DagID+"/"+cc.RunID),
				weir.EventExtra(map[string]any{"failed_run": cc.RunID, "event": cc.Event}))
			if err != nil {
				return err // the callback fails; the run stays failed either way
			}
			cc.Logger.Info("raised an ops alert", "event_id", rec.EventID, "duplicate", rec.Duplicate)
			return nil
		}, goOpsAlerts),
	)
	dag.Go("load", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		fail, err := weir.ParamAs[bool](tc, "fail")
		if err != nil {
			return nil, err
		}
		if fail {
			return nil, errors.New("the load failed (the run's conf says fail: true)")
		}
		return "loaded", nil
	}, weir.Retries(1), weir.RetryDelay(time.Second), weir.OnRetry(func(_ context.Context, cc *weir.CallbackContext) error {
		cc.Logger.Info("load failed, retrying", "task", cc.TaskID, "try", cc.TryNumber)
		return nil
	}))
	return dag
}

// opsResponderDAG runs once per alert (RunPerPartition): its task reads
// which run failed from the events that started it.
func opsResponderDAG() *weir.DAG {
	dag := weir.NewDAG("go_ops_responder",
		weir.Description("Responds to each alert go_ops_failing_load raises."),
		weir.Tags("example", "go", "callbacks"),
		weir.ScheduleOnAssets(goOpsAlerts), weir.RunPerPartition(),
	)
	dag.Go("page", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		evs := tc.TriggeringAssetEvents()
		if len(evs) == 0 {
			return nil, errors.New("started without an alert")
		}
		ev := evs[0]
		msg := fmt.Sprintf("responding to %s %s task=[%s] (callback %d)", ev.SourceDagID, ev.SourceRunID, ev.SourceTaskID, ev.SourceCallbackID)
		tc.Logger.Info(msg)
		return msg, nil
	}, weir.Inlets(goOpsAlerts))
	return dag
}
