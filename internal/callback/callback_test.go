package callback

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
)

func TestFireForTry(t *testing.T) {
	t.Parallel()
	cmd := func(s string) []core.CallbackSpec { return []core.CallbackSpec{{Command: s}} }
	task := &core.Task{TaskID: "load", Callbacks: &core.Callbacks{OnExecute: cmd("x"), OnSuccess: cmd("s"),
		OnFailure: []core.CallbackSpec{{Command: "f1"}, {Command: "f2"}}, OnRetry: cmd("r"), OnSkipped: cmd("k")}}
	ti := &core.TaskInstance{DagID: "d", RunID: "r1", DagRunID: 7, TaskID: "load", MapIndex: 2, TryNumber: 3}
	for _, tc := range []struct {
		state core.TIState
		want  []string // commands fired, in order
		event core.CallbackEvent
	}{
		{core.TIRunning, []string{"x"}, core.OnExecute},
		{core.TISuccess, []string{"s"}, core.OnSuccess},
		{core.TIFailed, []string{"f1", "f2"}, core.OnFailure},
		{core.TIUpForRetry, []string{"r"}, core.OnRetry},
		{core.TISkipped, []string{"k"}, core.OnSkipped},
		{core.TIUpstreamFailed, nil, ""}, // never ran: Airflow fires no failure callback either
		{core.TIQueued, nil, ""},
		{core.TIRemoved, nil, ""},
	} {
		got := FireForTry(task, ti, tc.state)
		var cmds []string
		for i, cb := range got {
			cmds = append(cmds, cb.Spec.Command)
			want := core.Callback{Level: core.CallbackTask, Event: tc.event, DagID: "d", RunID: "r1", DagRunID: 7,
				TaskID: "load", MapIndex: 2, TryNumber: 3, SpecIndex: i, Spec: cb.Spec, Outcome: string(tc.state)}
			if diff := cmp.Diff(want, cb); diff != "" {
				t.Errorf("%s: callback %d (-want +got):\n%s", tc.state, i, diff)
			}
		}
		if diff := cmp.Diff(tc.want, cmds); diff != "" {
			t.Errorf("%s fires (-want +got):\n%s", tc.state, diff)
		}
	}
	if got := FireForTry(&core.Task{TaskID: "plain"}, ti, core.TIFailed); len(got) != 0 {
		t.Errorf("a task without callbacks fired %v", got)
	}
}

func TestFireForRun(t *testing.T) {
	t.Parallel()
	dag := &core.DAG{DagID: "d", Callbacks: &core.Callbacks{OnSuccess: []core.CallbackSpec{{Command: "ok"}},
		OnFailure: []core.CallbackSpec{{Command: "page"}}}}
	run := &core.DagRun{ID: 9, DagID: "d", RunID: "r1"}
	for _, tc := range []struct {
		state core.DagRunState
		want  string
	}{{core.RunSuccess, "ok"}, {core.RunFailed, "page"}, {core.RunRunning, ""}, {core.RunQueued, ""}} {
		got := FireForRun(dag, run, tc.state)
		if tc.want == "" {
			if len(got) != 0 {
				t.Errorf("%s fired %v", tc.state, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Spec.Command != tc.want || got[0].TaskID != "" || got[0].TryNumber != 0 ||
			got[0].MapIndex != core.NoMapIndex || got[0].Level != core.CallbackDag || got[0].DagRunID != 9 {
			t.Errorf("%s fired %+v, want one DAG-level %q without a task", tc.state, got, tc.want)
		}
	}
	// A `weir tasks test`'s run tests one task: its end fires none of the
	// DAG's callbacks; a `dags test`'s fires them.
	for _, tc := range []struct {
		job  string
		want int
	}{{core.OneTaskTestPrefix + "7f", 0}, {"7f", 1}} {
		tested := &core.DagRun{ID: 9, DagID: "d", RunID: "test__1", TestJobID: tc.job}
		if got := FireForRun(dag, tested, core.RunFailed); len(got) != tc.want {
			t.Errorf("the end of a test run of job %q fired %d callbacks, want %d", tc.job, len(got), tc.want)
		}
	}
}

func TestEnvAndContext(t *testing.T) {
	t.Parallel()
	cb := &core.Callback{ID: 12, Level: core.CallbackDag, Event: core.OnFailure, DagID: "d", RunID: "r", Outcome: "failed",
		Attempts: 2, MapIndex: core.NoMapIndex}
	want := []string{"WEIR_CALLBACK_ID=12", "WEIR_CALLBACK_EVENT=on_failure", "WEIR_CALLBACK_OUTCOME=failed",
		"WEIR_CALLBACK_ATTEMPT=2", "WEIR_DAG_ID=d", "WEIR_RUN_ID=r"}
	if diff := cmp.Diff(want, Env(cb)); diff != "" {
		t.Errorf("DAG-level env (-want +got):\n%s", diff)
	}
	cb.Level, cb.TaskID, cb.TryNumber = core.CallbackTask, "t", 1
	if env := Env(cb); len(env) != len(want)+3 || env[len(env)-3] != "WEIR_TASK_ID=t" {
		t.Errorf("task-level env %v, want the task's identity too", env)
	}
	if c := Context(cb); c["event"] != "on_failure" || c["attempt"] != 2 || c["task_id"] != "t" {
		t.Errorf("context %v", c)
	}
}
