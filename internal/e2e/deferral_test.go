package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// deferDAG's "wait" task defers through the in-task CLI on a timedelta
// trigger and runs again when it fires; "other" shares its one-slot pool
// and can only run while "wait" is deferred (its slot is free).
const deferDAG = `dag_id: defer_shell
tasks:
  - task_id: wait
    operator: bash
    pool: single
    bash_command: |
      if [ -z "$WEIR_RESUME_METHOD" ]; then
        echo "first step"
        weir defer timedelta '{"delta": "20s"}' --resume after_wait --next-kwargs '{"batch": 7}' --timeout 10m || exit 3
        exit 100
      fi
      echo "resumed with $WEIR_RESUME_METHOD, kwargs $WEIR_NEXT_KWARGS, event $WEIR_TRIGGER_EVENT"
  - task_id: other
    operator: bash
    pool: single
    bash_command: echo other ran
  - task_id: late
    operator: bash
    bash_command: |
      weir defer timedelta '{"delta": "1h"}' --timeout 1s || exit 3
      exit 100
  - task_id: bad
    operator: bash
    bash_command: |
      weir defer no_such_trigger '{}' || exit 3
      exit 100
  - task_id: forbidden
    operator: bash
    bash_command: |
      weir defer command '{"command": "env"}' || exit 3
      exit 100
  - task_id: undeclared
    operator: bash
    bash_command: |
      weir defer sql '{"conn_id": "billing", "sql": "select 1"}' || exit 3
      exit 100
`

// TestShellTaskDefersAndResumes runs a shell task that defers through
// `weir defer` in standalone: its try goes to deferred, its pool slot is
// free (another task of a one-slot pool runs meanwhile), the triggerer
// fires and the same try resumes with the event and next kwargs, its log
// continuing the first step's. A deferral whose timeout passes fails
// with a message naming the trigger; an unknown trigger is refused at
// the defer call.
func TestShellTaskDefersAndResumes(t *testing.T) {
	t.Parallel()
	onEachEngine(t, shellDeferral)
}

func shellDeferral(t *testing.T, env []string) {
	dags, home := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dags, "defer.yaml"), deferDAG)
	s := startStandalone(t, home, dags, env...)
	mustWeir(t, env, "pools", "set", "single", "1", "--home", home)
	s.api.WaitDAG("defer_shell")
	s.api.Trigger("defer_shell", "r1", nil)

	s.api.WaitTIState("defer_shell", "r1", "wait", core.TIDeferred)
	other := s.api.WaitTIState("defer_shell", "r1", "other", core.TISuccess)
	wait := s.api.TaskInstance("defer_shell", "r1", "wait")
	if wait.State != core.TIDeferred {
		t.Fatalf("other finished at %v while wait was %s; want wait still deferred (its slot free)", other.EndDate, wait.State)
	}
	// What a user sees of the wait: the trigger in REST and in the CLI.
	if wait.Trigger == nil || wait.Trigger.Type != "timedelta" || wait.TriggerTimeout == nil {
		t.Errorf("deferred wait shows trigger %+v timeout %v, want its timedelta trigger and timeout", wait.Trigger, wait.TriggerTimeout)
	}
	states := mustWeir(t, env, "tasks", "states-for-dag-run", "defer_shell", "r1", "--home", home)
	if !strings.Contains(states, `timedelta trigger`) || !strings.Contains(states, `{"delta":"20s"}`) {
		t.Errorf("weir tasks states-for-dag-run does not show wait's trigger:\n%s", states)
	}
	if list := mustWeir(t, env, "triggers", "list", "--home", home); !strings.Contains(list, "timedelta") {
		t.Errorf("weir triggers list does not show the trigger:\n%s", list)
	}
	run := s.api.WaitRunDone("defer_shell", "r1")
	wait = s.api.TaskInstance("defer_shell", "r1", "wait")
	if wait.State != core.TISuccess || wait.TryNumber != 1 {
		t.Errorf("wait = %s on try %d, want success on try 1 (a deferral does not end the try)", wait.State, wait.TryNumber)
	}
	log := s.api.Log("defer_shell", "r1", "wait", 1)
	for _, want := range []string{"first step", "resumed with after_wait, kwargs {\"batch\":7}, event {\"moment\":"} {
		if !strings.Contains(log, want) {
			t.Errorf("wait's log lacks %q:\n%s", want, log)
		}
	}
	if i, j := strings.Index(log, "first step"), strings.Index(log, "resumed with"); i < 0 || j < i {
		t.Errorf("the resumed step's log does not follow the first step's:\n%s", log)
	}
	if late := s.api.TaskInstance("defer_shell", "r1", "late"); late.State != core.TIFailed {
		t.Errorf("late = %s, want failed by its deferral timeout", late.State)
	}
	if log := s.api.Log("defer_shell", "r1", "late", 1); !strings.Contains(log, "the timedelta trigger did not fire before the deferral's timeout") {
		t.Errorf("late's log does not name the timeout:\n%s", log)
	}
	if bad := s.api.TaskInstance("defer_shell", "r1", "bad"); bad.State != core.TIFailed {
		t.Errorf("bad = %s, want failed", bad.State)
	}
	if log := s.api.Log("defer_shell", "r1", "bad", 1); !strings.Contains(log, `unknown trigger type "no_such_trigger"`) {
		t.Errorf("bad's log does not name the unknown trigger:\n%s", log)
	}
	// What running code may not make the triggerer do (docs/security.md#triggers).
	for task, want := range map[string]string{
		"forbidden":  "a running task may not defer on a command trigger",
		"undeclared": `the trigger's conn_id "billing" is not a connection the task declares`,
	} {
		if ti := s.api.TaskInstance("defer_shell", "r1", task); ti.State != core.TIFailed {
			t.Errorf("%s = %s, want failed: its deferral is refused", task, ti.State)
		}
		if log := s.api.Log("defer_shell", "r1", task, 1); !strings.Contains(log, "the deferral was refused, so the try fails: ") ||
			!strings.Contains(log, want) {
			t.Errorf("%s's log does not say why its deferral was refused (%q):\n%s", task, want, log)
		}
	}
	if n := strings.Count(mustWeir(t, env, "triggers", "list", "--home", home), "command"); n != 0 {
		t.Errorf("a refused deferral left a command trigger")
	}
	if run.State != core.RunFailed {
		t.Errorf("run = %s, want failed (late, bad, forbidden and undeclared failed)", run.State)
	}
}
