package weir_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir"
)

// A DAG of a Go task feeding a mapped Go task and a bash task. A program
// hands its DAGs to weir.Main, which gives it the whole weir command line:
// `prog dags test etl`, `prog standalone`, `prog worker`, ...
func ExampleNewDAG() {
	dag := weir.NewDAG("etl",
		weir.Schedule("@daily"),
		weir.StartDate(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)),
		weir.DefaultArgs(weir.Retries(2), weir.RetryDelay(30*time.Second)),
	)
	extract := dag.Go("extract", func(_ context.Context, _ *weir.TaskContext) (any, error) {
		return []string{"orders", "customers"}, nil
	})
	load := dag.Go("load", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		table, err := weir.MapArg[string](tc, "table")
		if err != nil {
			return nil, err
		}
		tc.Logger.Info("loading", "table", table)
		return nil, nil
	}, weir.ExpandXCom("table", extract))
	load.Then(dag.Bash("report", "echo loaded {{ .ds }}"))

	// In main: weir.Main(dag)

	fmt.Println(dag.Validate())
	// Output: <nil>
}

// Validate reports every problem with the DAG and task it concerns, as
// weir.Main does before it exits with code 2.
func ExampleDAG_Validate() {
	dag := weir.NewDAG("broken")
	a := dag.Noop("a")
	b := dag.Noop("b", weir.DependsOn(a), weir.TriggerRule("sometimes"))
	b.Then(a)

	fmt.Println(dag.Validate())
	// Output:
	// go:weir.test: dag "broken": tasks.b.trigger_rule: unknown trigger rule "sometimes"; allowed: all_success, all_failed, all_done, one_success, one_failed, none_failed, none_failed_min_one_success, none_skipped, always
	// go:weir.test: dag "broken": tasks.a.depends_on: dependency cycle: a -> b -> a
}
