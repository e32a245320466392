package command_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/wait"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/command"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// lines is a watcher script over a source file of lines: each run prints
// an event line per line past the cursor (a line number, null at first)
// and then the new cursor, and exits, as a batch job would.
const lines = `
cur=$WEIR_WATCHER_CURSOR; [ "$cur" = null ] && cur=0
n=$(wc -l < "$SRC"); i=$cur
while [ "$i" -lt "$n" ]; do
  i=$((i+1))
  printf '{"event": {"n": %d, "line": "%s"}, "partition_key": "p%d"}\n' "$i" "$(sed -n "${i}p" "$SRC")" "$i"
done
[ "$i" -gt "$cur" ] && printf '{"cursor": %d}\n' "$i"
exit 0
`

// startScript runs script as a command watcher for w, with env.
func startScript(t *testing.T, w *triggertest.Watcher, script string, env map[string]string) *triggertest.Run {
	t.Helper()
	kwargs, _ := json.Marshal(map[string]any{"command": script, "env": env, "poll_interval": "10ms"})
	return w.Start(t, triggertest.New(t, command.Type, string(kwargs)), nil)
}

func appendLines(t *testing.T, path string, ls ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, l := range ls {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAWatcherScriptGetsItsCursorAndCommitsEachItemOnce: the process
// receives the committed cursor, its event lines are committed with the
// cursor line that follows them, each item once across runs, and a
// watcher started again from the committed cursor goes on from there.
func TestAWatcherScriptGetsItsCursorAndCommitsEachItemOnce(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "src")
	appendLines(t, src, "a", "b", "c")
	w := triggertest.NewWatcher("lines", trigger.AssetInfo{Name: "lines"})
	run := startScript(t, w, lines, map[string]string{"SRC": src})
	w.WaitEvents(t, "lines", 3)
	appendLines(t, src, "d", "e")
	evs := w.WaitEvents(t, "lines", 5)
	triggertest.ExpectFields(t, evs, "line", "a,b,c,d,e", "each line once, in order")
	if evs[4].PartitionKey != "p5" || evs[4].Asset != "" {
		t.Errorf("event %+v, want partition key p5 and no asset named (the only one)", evs[4])
	}
	for _, b := range w.Commits() {
		if len(b.Cursors) != 1 || len(b.Events) == 0 {
			t.Errorf("commit %+v, want events together with their cursor", b)
		}
	}
	run.Cancel(t)
	if got := string(w.Cursor("lines")); got != "5" {
		t.Errorf("cursor %s, want 5", got)
	}

	again := triggertest.NewWatcher("lines", trigger.AssetInfo{Name: "lines"})
	again.SetCursor("lines", w.Cursor("lines"))
	startScript(t, again, lines, map[string]string{"SRC": src})
	appendLines(t, src, "f")
	triggertest.ExpectFields(t, again.WaitEvents(t, "lines", 1), "line", "f", "after the restart: only f")
}

// TestSeveralAssetsGetTheirCursorsAndRouting: with several watched
// assets the process gets an object of cursors and the assets' list; its
// lines name the asset an event or a cursor belongs to; a bare value is
// an event of every asset; a line naming an asset not watched, or with a
// bad partition key, is logged and skipped.
func TestSeveralAssetsGetTheirCursorsAndRouting(t *testing.T) {
	t.Parallel()
	script := `
printf '{"event": {"cursors": %s, "assets": %s}, "asset": "a"}\n' "$WEIR_WATCHER_CURSOR" "$WEIR_WATCHED_ASSETS"
echo '{"event": {"x": 1}, "asset": "nope"}'
echo '{"event": {"x": 2}, "partition_key": 7}'
echo '{"cursor": {"at": 1}, "asset": "a"}'
echo '{"bare": true}'
sleep 600`
	w := triggertest.NewWatcher("w", trigger.AssetInfo{Name: "a", URI: "s3://in/a"}, trigger.AssetInfo{Name: "b", Extra: map[string]any{"team": "x"}})
	w.SetCursor("b", json.RawMessage(`"B"`))
	run := startScript(t, w, script, nil)
	w.WaitEvents(t, "b", 1)
	evs := w.Events("a")
	if len(evs) != 2 {
		t.Fatalf("events of a %+v, want the env event and the bare one", evs)
	}
	got, _ := json.Marshal(triggertest.Payload(evs[0]))
	want := `{"assets":[{"name":"a","uri":"s3://in/a"},{"extra":{"team":"x"},"name":"b","uri":""}],"cursors":{"a":null,"b":"B"}}`
	if string(got) != want {
		t.Errorf("the process saw %s, want %s", got, want)
	}
	if string(w.Cursor("a")) != `{"at": 1}` || string(w.Cursor("b")) != `"B"` {
		t.Errorf("cursors a %s, b %s, want a's moved by its cursor line and b's unchanged", w.Cursor("a"), w.Cursor("b"))
	}
	if string(w.Events("b")[0].Payload.(json.RawMessage)) != `{"bare": true}` {
		t.Errorf("b's event %+v, want the bare value", w.Events("b")[0])
	}
	log := run.Log()
	if !strings.Contains(log, `asset "nope" is not watched`) || !strings.Contains(log, `"partition_key" must be a string, got 7`) {
		t.Errorf("log lacks the skipped lines' reasons:\n%s", log)
	}
}

// TestAFailedRunOrCommitIsRetriedFromTheCursor: events printed before a
// failing exit are not recorded, the failure (code and stderr) is a poll
// error, and the next run records them; a commit that fails stops the
// process, and a later run from the committed cursor records what it
// had printed, so nothing is lost.
func TestAFailedRunOrCommitIsRetriedFromTheCursor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	appendLines(t, src, "a")
	// the first run prints its events and fails before the cursor line
	flaky := `if [ ! -e "$DIR/ran" ]; then touch "$DIR/ran"; echo '{"event": {"line": "a"}}'; echo "disk full" >&2; exit 3; fi` + lines
	w := triggertest.NewWatcher("lines", trigger.AssetInfo{Name: "lines"})
	startScript(t, w, flaky, map[string]string{"SRC": src, "DIR": dir})
	w.WaitEvents(t, "lines", 1)
	if errs := w.PollErrors(); len(errs) == 0 || !strings.Contains(errs[0].Error(), "exit status 3") || !strings.Contains(errs[0].Error(), "disk full") {
		t.Errorf("poll errors %v, want the exit code and the stderr", errs)
	}
	triggertest.ExpectFields(t, w.Events("lines"), "line", "a", "a once, after the failed run")

	w.Fail(errors.New("database is down"))
	appendLines(t, src, "b")
	wait.Until(t, triggertest.Bound, "a failed commit", func() bool {
		errs := w.PollErrors()
		return strings.Contains(errs[len(errs)-1].Error(), "database is down")
	})
	w.Fail(nil)
	triggertest.ExpectFields(t, w.WaitEvents(t, "lines", 2), "line", "a,b", "nothing lost to the failed commit")
}

// TestAConflictingCommitRunsTheProcessAgain: when an admin set the cursor
// while the process ran, its commit is refused (the edit wins) and the
// next run starts from the edited cursor.
func TestAConflictingCommitRunsTheProcessAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, runs := filepath.Join(dir, "src"), filepath.Join(dir, "runs")
	appendLines(t, src, "a", "b", "c")
	w := triggertest.NewWatcher("lines", trigger.AssetInfo{Name: "lines"})
	w.Fail(core.ErrConflict)
	startScript(t, w, `echo "$WEIR_WATCHER_CURSOR" >> "$RUNS"`+lines, map[string]string{"SRC": src, "RUNS": runs})
	wait.Until(t, triggertest.Bound, "a refused commit", func() bool { return len(w.PollErrors()) > 0 })
	w.SetCursor("lines", json.RawMessage("2"))
	// runs are one after the other: once one has the edited cursor, none
	// from the old one can commit any more
	wait.Until(t, triggertest.Bound, "a run from the edited cursor", func() bool {
		b, _ := os.ReadFile(runs)
		return strings.Contains(string(b), "2\n")
	})
	w.Fail(nil)
	triggertest.ExpectFields(t, w.WaitEvents(t, "lines", 1), "line", "c", "c only (after the edited cursor)")
}

// TestTheTailExampleRecordsEachMatchOnce: examples/watchers/tail_errors.py,
// a long-running watcher, records each matching line once, also after it
// is started again from its committed cursor.
func TestTheTailExampleRecordsEachMatchOnce(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../../examples/watchers/tail_errors.py")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "app.log")
	appendLines(t, logFile, "INFO up", "ERROR one", "INFO ok", "ERROR two")
	kwargs, _ := json.Marshal(map[string]any{"argv": []string{"python3", script},
		"env": map[string]string{"LOG_FILE": logFile, "INTERVAL": "0.02"}})
	w := triggertest.NewWatcher("tail", trigger.AssetInfo{Name: "errors"})
	run := w.Start(t, triggertest.New(t, command.Type, string(kwargs)), nil)
	w.WaitEvents(t, "errors", 2)
	appendLines(t, logFile, "ERROR three")
	triggertest.ExpectFields(t, w.WaitEvents(t, "errors", 3), "line", "ERROR one,ERROR two,ERROR three", "the three ERROR lines")
	run.Cancel(t)

	again := triggertest.NewWatcher("tail", trigger.AssetInfo{Name: "errors"})
	again.SetCursor("errors", w.Cursor("errors"))
	again.Start(t, triggertest.New(t, command.Type, string(kwargs)), nil)
	appendLines(t, logFile, "INFO fine", "ERROR four")
	triggertest.ExpectFields(t, again.WaitEvents(t, "errors", 1), "line", "ERROR four", "after the restart: only the new ERROR four")
}
