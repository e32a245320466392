package command_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/internal/testutil/proctest"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/command"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// TestEachJSONLineIsAnEventInOrder: JSON lines become events in order;
// a line that is not JSON is a warning in the log, stderr goes to the
// log, and exit code 0 after events ends the trigger without error.
func TestEachJSONLineIsAnEventInOrder(t *testing.T) {
	t.Parallel()
	script := `echo '{"n": 1}'; echo 'not json'; echo "to stderr" >&2; echo '{"n":2}'; echo; printf '[3]'`
	kwargs, _ := json.Marshal(map[string]any{"command": script})
	run := triggertest.Start(t, triggertest.New(t, command.Type, string(kwargs)), nil)
	for _, want := range []string{`{"n":1}`, `{"n":2}`, `[3]`} {
		if got := string(run.Event(t)); got != want {
			t.Errorf("event = %s, want %s", got, want)
		}
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("a command that exits 0 after events: Run = %v, want nil", err)
	}
	log := run.Log()
	if !strings.Contains(log, "WARNING: a stdout line is not JSON, so not an event: not json") || !strings.Contains(log, "stderr: to stderr") {
		t.Errorf("log lacks the non-JSON warning or the stderr line:\n%s", log)
	}
}

// TestArgvFromPathWithEnvAndCwd: argv[0] is looked up in PATH and the
// process gets env over the basics of the triggerer's environment (PATH,
// HOME, ...), in cwd — never the triggerer's configuration or secrets.
func TestArgvFromPathWithEnvAndCwd(t *testing.T) {
	t.Setenv("WEIR__DATABASE__CONN", "postgres://weir:hunter2@db/weir")
	t.Setenv("WEIR_CONN_WAREHOUSE", "postgres://etl:s3cret@wh/etl")
	dir := t.TempDir()
	kwargs, _ := json.Marshal(map[string]any{"argv": []string{"sh", "-c", `printf '{"dir":"%s","x":"%s","path_set":%s,"secrets":"%s"}\n' "$PWD" "$X" "$([ -n "$PATH" ] && echo true || echo false)" "$WEIR__DATABASE__CONN$WEIR_CONN_WAREHOUSE"`},
		"env": map[string]string{"X": "from env"}, "cwd": dir})
	run := triggertest.Start(t, triggertest.New(t, command.Type, string(kwargs)), nil)
	var got map[string]any
	if err := json.Unmarshal(run.Event(t), &got); err != nil {
		t.Fatal(err)
	}
	if got["dir"] != dir || got["x"] != "from env" || got["path_set"] != true || got["secrets"] != "" {
		t.Errorf("event = %v, want dir %s, x \"from env\", PATH set and none of the triggerer's secrets", got, dir)
	}
}

// TestFailuresNameTheExitCodeAndStderr: a nonzero exit, an exit 0 with no
// event and a program not in PATH each end the trigger with an error that
// says why.
func TestFailuresNameTheExitCodeAndStderr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ kwargs, want string }{
		{`{"command":"echo '{}'; echo 'disk full' >&2; exit 3"}`, "exited with code 3 after 1 event(s); last stderr lines:\ndisk full"},
		{`{"command":"echo 'nothing to watch' >&2"}`, "exited with code 0 without printing an event (a JSON line on stdout); last stderr lines:\nnothing to watch"},
		{`{"argv":["weir-no-such-program"]}`, `command "weir-no-such-program": exec: "weir-no-such-program": executable file not found in $PATH`},
	} {
		run := triggertest.Start(t, triggertest.New(t, command.Type, c.kwargs), nil)
		if strings.Contains(c.kwargs, "exit 3") {
			run.Event(t)
		}
		if err := run.Wait(t); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Run = %v, want an error containing %q", c.kwargs, err, c.want)
		}
	}
}

// TestCancelKillsTheProcessGroup: cancelling the trigger ends the command
// and its children, even a child that ignores SIGTERM (SIGKILL after the
// grace period).
func TestCancelKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := `(trap '' TERM; echo $BASHPID > ` + pidFile + `; while :; do sleep 1; done) & echo '{"up":true}'; wait`
	kwargs, _ := json.Marshal(map[string]any{"command": script})
	run := triggertest.Start(t, triggertest.New(t, command.Type, string(kwargs)), nil)
	run.Event(t)
	var pid int
	wait.Until(t, triggertest.Bound, "the child's pid", func() bool {
		var ok bool
		pid, ok = proctest.ReadPID(pidFile)
		return ok
	})
	run.Cancel(t)
	wait.Until(t, triggertest.Bound, "child "+strconv.Itoa(pid)+" to die", func() bool { return !proctest.Alive(pid) })
}

// TestAStreamCommitsTheLinesReadTogetherInBatches: on a stream, lines
// the command printed faster than they were committed go in batches (one
// transaction each, at most 500 events), every one once and in order.
func TestAStreamCommitsTheLinesReadTogetherInBatches(t *testing.T) {
	t.Parallel()
	kwargs, _ := json.Marshal(map[string]any{"command": `seq 1 5000 | awk '{printf "{\"n\": %d}\n", $1}'`})
	var mu sync.Mutex
	var got []int
	commits, biggest := 0, 0
	rt := &trigger.Runtime{Stream: &trigger.StreamPosition{ID: "s", LastIndex: -1}}
	rt.EmitBatchFunc = func(_ context.Context, es []trigger.Event) error {
		mu.Lock()
		defer mu.Unlock()
		commits, biggest = commits+1, max(biggest, len(es))
		for _, e := range es {
			var ev struct{ N int }
			if err := json.Unmarshal(e.Payload, &ev); err != nil {
				return err
			}
			got = append(got, ev.N)
		}
		return nil
	}
	rt.EmitFunc = func(ctx context.Context, e trigger.Event) error { return rt.EmitBatchFunc(ctx, []trigger.Event{e}) }
	run := triggertest.Start(t, triggertest.New(t, command.Type, string(kwargs)), rt)
	if err := run.Wait(t); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range got {
		if n != i+1 {
			t.Fatalf("event %d is n %d: want 1..5000 once each, in order", i, n)
		}
	}
	if len(got) != 5000 || commits >= 5000 || biggest > 500 {
		t.Errorf("%d events in %d commits (largest %d): want 5000 in batches of at most 500", len(got), commits, biggest)
	}
}
