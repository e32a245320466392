package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// `weir tasks expansion` shows a task mapped over a stream as it expands
// (items and instances so far, open), and refuses a task without iterate
// naming it; through the REST API it prints the same.
func TestTasksExpansion(t *testing.T) {
	t.Parallel()
	onEachEngine(t, func(t *testing.T, s *surfaces) {
		ctx := t.Context()
		dag := core.DAG{DagID: "lazy", Tasks: []core.Task{
			{TaskID: "fetch", Operator: "sensor", StartTrigger: &core.Deferral{Trigger: core.TriggerSpec{Type: "command", Kwargs: json.RawMessage(`{"command":"true"}`)}}},
			{TaskID: "insert", Operator: "noop", Iterate: "fetch"},
		}}
		if _, _, err := s.st.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: "lazy", Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		s.run("dags", "trigger", "lazy", "--run-id", "r1")
		run, err := s.st.DagRunGet(ctx, "lazy", "r1")
		if err != nil {
			t.Fatal(err)
		}
		sid := core.TaskStreamID(run.ID, "fetch")
		if _, err := s.st.StreamCreate(ctx, &store.StreamCreateParams{ID: sid, MaxPending: 10, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.st.StreamAppend(ctx, &store.StreamAppendParams{StreamID: sid, Payloads: []json.RawMessage{[]byte(`1`), []byte(`2`)}, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		got := s.run("tasks", "expansion", "lazy", "r1", "insert", "-o", "plain")
		if fields := strings.Fields(got); len(fields) < 5 || fields[0] != "insert" || fields[1] != "fetch" || fields[2] != "2" || fields[3] != "0" || fields[4] != "open" {
			t.Errorf("tasks expansion = %q, want insert over fetch, 2 items, 0 instances, open", got)
		}
		code, _, stderr := weir(t, s.env, "tasks", "expansion", "lazy", "r1", "fetch")
		if code == 0 || !strings.Contains(stderr, `task "fetch" does not iterate over a stream`) {
			t.Errorf("tasks expansion of the producer: exit %d, stderr %q; want a refusal naming it", code, stderr)
		}
		// `weir stream show` reads the stream's head, locally and remotely.
		if got := s.run("stream", "show", sid, "-o", "plain"); !strings.HasPrefix(got, sid+"\t2\t2\t10\topen\t-") {
			t.Errorf("stream show = %q, want the stream with 2 items, 2 pending of 10, open", got)
		}
		for _, args := range [][]string{{"tasks", "expansion", "lazy", "r1", "insert"}, {"tasks", "expansion", "lazy", "r1", "insert", "-o", "json"},
			{"tasks", "expansion", "lazy", "r1", "fetch"}, {"tasks", "expansion", "lazy", "nope", "insert"},
			{"stream", "show", sid}, {"stream", "show", sid, "-o", "json"}, {"stream", "show", "nope"}} {
			lo, le, lc := weirIn(t, s.env, "", args...)
			ro, re, rc := weirIn(t, s.remoteEnv(), "", args...)
			if lo != ro || le != re || lc != rc {
				t.Errorf("weir %s differs:\nlocal  (exit %d): %q %q\nremote (exit %d): %q %q", strings.Join(args, " "), lc, lo, le, rc, ro, re)
			}
		}
	})
}
