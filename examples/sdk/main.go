// Command sdk is an example program built with Weir's Go SDK: the weir
// command line with Go-defined DAGs compiled in.
//
//	go run ./examples/sdk dags test go_etl --home /tmp/weir-sdk
//	go run ./examples/sdk standalone --home /tmp/weir-sdk --dags examples/dags --port 8080
//
// The DAGs:
//   - go_etl: extract returns a list; transform is mapped over it (one
//     instance per element); load pulls every instance's result and sums it.
//   - go_retries: flaky fails its first try and succeeds on the retry.
//   - go_mixed: a Go task's return value used by a bash task's template, and
//     a task that skips itself unless the run's conf says publish.
//   - go_resume_external_job, go_checkpoint_resume, go_progress_report: the
//     task-state patterns (resumable.go, patterns.go; docs/resumable-jobs.md,
//     docs/task-state.md).
//   - go_watermark_load: the asset watermark pattern with asset state
//     (watermark.go; docs/asset-state.md).
//   - go_deferral: Go tasks that defer and resume, a task that starts from
//     a trigger, and a sensor (deferral.go; docs/go-sdk.md#deferral).
//   - go_custom_trigger: a wait on the program's own trigger type, tcp_port
//     (tcpport.go), registered with weir.RegisterTrigger before weir.Main.
//   - go_watcher: an asset watched by the program's own poll-function
//     watcher, jsonl_tail (watcher.go): a run per batch of new lines.
//   - go_emit_batches, go_batches_consumer: the batch pipeline (batches.go;
//     docs/emission.md): an event per batch as it commits, and a consumer
//     run per batch (RunPerPartition).
//   - go_ops_failing_load, go_ops_responder: Go callbacks (ops.go;
//     docs/go-sdk.md#callbacks): a retry logged by an OnRetry callback, and
//     an operational DAG started by the event a failed run's OnRunFailure
//     callback emits.
//   - go_stream_pages: the streaming pipeline (pages.go; docs/streaming.md):
//     a paginated API this program serves on 127.0.0.1:8791, its pages
//     inserted into SQLite by a task mapped lazily over them while later
//     pages are fetched, and by a streaming operator.
//   - go_stream_batches: a streaming operator whose Go handler takes
//     batches (streambatch.go): the events committed since its previous
//     call, inserted into SQLite in one transaction.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/weirflow/weir"
)

func main() {
	// Custom trigger types are registered before weir.Main: every role of
	// the deployment runs this program, so each one knows them.
	for _, t := range []weir.TriggerType{tcpPortType, jsonlTailType} {
		if err := weir.RegisterTrigger(t); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	servePages() // the paginated API of go_stream_pages and stream_pages.yaml
	weir.Main(etlDAG(), retriesDAG(), mixedDAG(), resumeExternalJobDAG(), checkpointDAG(), progressDAG(), watermarkDAG(),
		deferralDAG(), customTriggerDAG(), watcherDAG(), batchesDAG(), batchesConsumerDAG(),
		opsFailingLoadDAG(), opsResponderDAG(), streamPagesDAG(), streamBatchesDAG())
}

// etlDAG maps transform over extract's list and sums the results in load.
func etlDAG() *weir.DAG {
	dag := weir.NewDAG("go_etl",
		weir.Description("Extract a list, square each element in a mapped task, sum the squares."),
		weir.Tags("example", "go"),
		weir.Params(map[string]any{"count": 3}),
		weir.DefaultArgs(weir.Retries(1), weir.RetryDelay(time.Second)),
	)
	extract := dag.Go("extract", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		n, err := weir.ParamAs[int](tc, "count")
		if err != nil {
			return nil, err
		}
		items := make([]int, n)
		for i := range items {
			items[i] = i + 1
		}
		tc.Logger.Info("extracted", "items", items)
		return items, nil
	})
	transform := dag.Go("transform", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		n, err := weir.MapArg[int](tc, "n")
		if err != nil {
			return nil, err
		}
		return n * n, nil
	}, weir.ExpandXCom("n", extract))
	dag.Go("load", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		// transform has one instance per element of extract's list; pull
		// each instance's return value by map index.
		items, err := weir.XComPull[[]int](ctx, tc, "extract")
		if err != nil {
			return nil, err
		}
		sum := 0
		for i := range items {
			sq, err := weir.XComPullMapped[int](ctx, tc, "transform", "", i)
			if err != nil {
				return nil, err
			}
			sum += sq
		}
		tc.Logger.Info("loaded", "sum_of_squares", sum)
		return sum, nil
	}, weir.DependsOn(transform))
	return dag
}

// retriesDAG has a task that fails on its first try and succeeds on the
// second, one second later.
func retriesDAG() *weir.DAG {
	dag := weir.NewDAG("go_retries", weir.Description("A flaky Go task that succeeds on its retry."),
		weir.Tags("example", "go"))
	dag.Go("flaky", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		if tc.TryNumber == 1 {
			return nil, errors.New("transient failure on the first try")
		}
		return fmt.Sprintf("succeeded on try %d", tc.TryNumber), nil
	}, weir.Retries(1), weir.RetryDelay(time.Second))
	return dag
}

// mixedDAG passes a Go task's return value to a bash task through a
// template, and skips a task by returning weir.ErrSkip.
func mixedDAG() *weir.DAG {
	dag := weir.NewDAG("go_mixed", weir.Description("A Go task feeding a bash task."),
		weir.Tags("example", "go"), weir.Params(map[string]any{"name": "world", "publish": false}))
	greet := dag.Go("greet", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		day, err := weir.OpKwarg[string](tc, "day")
		if err != nil {
			return nil, err
		}
		return fmt.Sprintf("hello, %v (run of %s)", tc.Param("name"), day), nil
	}, weir.OpKwargs(map[string]any{"day": "{{ ds }}"}))
	dag.Bash("echo", `echo {{ ti.xcom_pull(task_ids="greet") | shquote }}`, weir.DependsOn(greet))
	dag.Go("publish", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		publish, err := weir.ParamAs[bool](tc, "publish")
		if err != nil {
			return nil, err
		}
		if !publish {
			return nil, fmt.Errorf("publishing is off (trigger with conf {\"publish\": true}): %w", weir.ErrSkip)
		}
		return "published", nil
	}, weir.DependsOn(greet))
	return dag
}
