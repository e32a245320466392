package dagprocessor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func newProcessor(t *testing.T) (*Processor, string) {
	t.Helper()
	dir := t.TempDir()
	return &Processor{Store: sqlitetest.Open(t), Dir: dir, Clock: fixedClock{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}, PauseNew: true}, dir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func dagYAML(id, cmd string) string {
	return "dag_id: " + id + "\ntasks:\n  - task_id: t\n    operator: bash\n    bash_command: " + cmd + "\n"
}

func syncOnce(t *testing.T, p *Processor) {
	t.Helper()
	if err := p.SyncOnce(t.Context()); err != nil {
		t.Fatalf("SyncOnce: %v", err)
	}
}

func dagState(t *testing.T, p *Processor, id string) *core.DagModel {
	t.Helper()
	d, err := storeOf(p).DagGet(t.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func importErrors(t *testing.T, p *Processor) map[string]string {
	t.Helper()
	list, err := storeOf(p).ImportErrorList(t.Context(), &store.ImportErrorListParams{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range list {
		out[e.Filename] = e.Message
	}
	return out
}

func TestSyncFilesAndImportErrors(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	a, b, broken := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "sub", "b.yml"), filepath.Join(dir, "broken.yaml")
	write(t, a, dagYAML("alpha", "echo a"))
	write(t, b, dagYAML("beta", "echo b"))
	write(t, broken, "dag_id: gamma\ntasks:\n  - task_id: t\n    operator: bash\n    retries: -1\n    bash_command: x\n")
	write(t, filepath.Join(dir, ".hidden", "h.yaml"), dagYAML("hidden", "x"))
	write(t, filepath.Join(dir, "notes.txt"), "not a dag")
	syncOnce(t, p)

	for _, id := range []string{"alpha", "beta"} {
		d := dagState(t, p, id)
		if d == nil || !d.IsActive || !d.IsPaused {
			t.Fatalf("%s: %+v, want active and paused", id, d)
		}
	}
	if d := dagState(t, p, "hidden"); d != nil {
		t.Fatal("a DAG in a hidden folder was loaded")
	}
	errs := importErrors(t, p)
	if len(errs) != 1 || !strings.Contains(errs[broken], broken+":5:14: tasks[0].retries: must be a non-negative integer") {
		t.Fatalf("import errors = %v", errs)
	}

	// Fixing the file clears its import error and adds its DAG.
	write(t, broken, dagYAML("gamma", "echo g"))
	syncOnce(t, p)
	if errs := importErrors(t, p); len(errs) != 0 {
		t.Fatalf("import errors after fix = %v", errs)
	}
	if d := dagState(t, p, "gamma"); d == nil || !d.IsActive {
		t.Fatalf("gamma after fix: %+v", d)
	}

	// Removing a file deactivates its DAG only.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, p)
	if d := dagState(t, p, "beta"); d == nil || d.IsActive {
		t.Fatalf("beta after removal: %+v, want inactive", d)
	}
	if d := dagState(t, p, "alpha"); !d.IsActive {
		t.Fatal("alpha deactivated by another file's removal")
	}

	// It comes back when the file does.
	write(t, b, dagYAML("beta", "echo b"))
	syncOnce(t, p)
	if d := dagState(t, p, "beta"); !d.IsActive {
		t.Fatal("beta not reactivated")
	}
}

func TestOnlyChangedFilesReparsed(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	a := filepath.Join(dir, "a.yaml")
	write(t, a, dagYAML("alpha", "echo 1"))
	write(t, filepath.Join(dir, "b.yaml"), dagYAML("beta", "echo b"))
	syncOnce(t, p)
	if p.parses != 2 {
		t.Fatalf("parses = %d, want 2", p.parses)
	}
	syncOnce(t, p)
	if p.parses != 2 {
		t.Fatalf("unchanged files re-parsed: parses = %d", p.parses)
	}
	// A new modification time with the same content is not re-parsed.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, p)
	if p.parses != 2 {
		t.Fatalf("touched file re-parsed: parses = %d", p.parses)
	}
	v1, err := storeOf(p).DagVersionLatest(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	write(t, a, dagYAML("alpha", "echo 2"))
	if err := os.Chtimes(a, later.Add(time.Hour), later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, p)
	if p.parses != 3 {
		t.Fatalf("parses = %d, want 3", p.parses)
	}
	v2, err := storeOf(p).DagVersionLatest(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != v1.Version+1 || v2.Spec.Tasks[0].Args["bash_command"] != "echo 2" {
		t.Fatalf("version after change: %d (was %d), spec %+v", v2.Version, v1.Version, v2.Spec.Tasks[0].Args)
	}
}

func TestBrokenFileKeepsLastGoodDAG(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	a := filepath.Join(dir, "a.yaml")
	write(t, a, dagYAML("alpha", "echo 1"))
	syncOnce(t, p)
	write(t, a, "dag_id: alpha\ntasks: [")
	for range 2 {
		syncOnce(t, p)
		if d := dagState(t, p, "alpha"); !d.IsActive {
			t.Fatal("a broken file deactivated its DAG")
		}
	}
	// A restarted processor keeps it too.
	p2 := &Processor{Store: p.Store, Dir: dir}
	syncOnce(t, p2)
	if d := dagState(t, p, "alpha"); !d.IsActive {
		t.Fatal("a restarted processor deactivated a broken file's DAG")
	}
	if errs := importErrors(t, p2); !strings.Contains(errs[a], "invalid YAML") {
		t.Fatalf("import errors = %v", errs)
	}
}

func TestDuplicateDagIDIsImportErrorForSecondFile(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	first, second := filepath.Join(dir, "b_first.yaml"), filepath.Join(dir, "a_second.yaml")
	write(t, first, dagYAML("alpha", "echo first"))
	syncOnce(t, p)
	// a_second.yaml sorts first but arrives later: the first owner keeps the id.
	write(t, second, dagYAML("alpha", "echo second")+"---\n"+dagYAML("other", "echo o"))
	syncOnce(t, p)
	errs := importErrors(t, p)
	if !strings.Contains(errs[second], `dag_id "alpha" is already defined in `+first) {
		t.Fatalf("import errors = %v", errs)
	}
	v, err := storeOf(p).DagVersionLatest(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	if v.Spec.FileLoc != first {
		t.Fatalf("alpha now from %s", v.Spec.FileLoc)
	}
	if d := dagState(t, p, "other"); d != nil {
		t.Fatal("a DAG of the conflicting file was synced")
	}
	// Removing the first file hands the id over.
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	syncOnce(t, p)
	if errs := importErrors(t, p); len(errs) != 0 {
		t.Fatalf("import errors = %v", errs)
	}
	if v, _ := storeOf(p).DagVersionLatest(t.Context(), "alpha"); v.Spec.FileLoc != second {
		t.Fatalf("alpha from %s, want %s", v.Spec.FileLoc, second)
	}
}

func TestExtraDAGs(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	p.PauseNew = false
	p.Extra = []core.DAG{
		{DagID: "sdk", FileLoc: "go:mybin", Tasks: []core.Task{{TaskID: "f", Operator: "go", Args: map[string]any{"function": "f"}}}},
		{DagID: "bad", FileLoc: "go:mybin", Tasks: []core.Task{{TaskID: "f", Operator: "go"}}},
	}
	write(t, filepath.Join(dir, "dup.yaml"), dagYAML("sdk", "echo"))
	syncOnce(t, p)
	d := dagState(t, p, "sdk")
	if d == nil || !d.IsActive || d.IsPaused || d.FileLoc != "go:mybin" {
		t.Fatalf("sdk DAG: %+v", d)
	}
	v, err := storeOf(p).DagVersionLatest(t.Context(), "sdk")
	if err != nil {
		t.Fatal(err)
	}
	if v.Spec.Tasks[0].Pool != core.DefaultPool {
		t.Fatalf("defaults not applied to SDK DAG: %+v", v.Spec.Tasks[0])
	}
	errs := importErrors(t, p)
	if !strings.Contains(errs["go:mybin"], `go:mybin: dag "bad": tasks[0].function: is required for go tasks`) {
		t.Fatalf("import errors = %v", errs)
	}
	if !strings.Contains(errs[filepath.Join(dir, "dup.yaml")], `dag_id "sdk" is already defined in go:mybin`) {
		t.Fatalf("import errors = %v", errs)
	}
}

func TestMissingDirChangesNothing(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	write(t, filepath.Join(dir, "a.yaml"), dagYAML("alpha", "echo"))
	syncOnce(t, p)
	p.Dir = filepath.Join(dir, "gone")
	if err := p.SyncOnce(t.Context()); err == nil {
		t.Fatal("no error for a missing folder")
	}
	if d := dagState(t, p, "alpha"); !d.IsActive {
		t.Fatal("a scan failure deactivated DAGs")
	}
}

func TestStartSyncsUntilCancelled(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	write(t, filepath.Join(dir, "a.yaml"), dagYAML("alpha", "echo"))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for dagState(t, p, "alpha") == nil {
		if time.Now().After(deadline) {
			t.Fatal("Start did not sync")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

func TestDefaultTimezoneForDAGsWithoutOne(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	p.DefaultTimezone = "Europe/Amsterdam"
	write(t, filepath.Join(dir, "a.yaml"), dagYAML("alpha", "echo a"))
	write(t, filepath.Join(dir, "b.yaml"), "dag_id: beta\ntimezone: Asia/Tokyo\ntasks:\n  - task_id: t\n    operator: noop\n")
	syncOnce(t, p)
	for id, want := range map[string]string{"alpha": "Europe/Amsterdam", "beta": "Asia/Tokyo"} {
		v, err := storeOf(p).DagVersionLatest(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if v.Spec.Timezone != want {
			t.Errorf("%s: timezone %q, want %q", id, v.Spec.Timezone, want)
		}
	}
}

// [scheduler] create_cron_data_intervals = false gives a cron schedule that
// names no timetable Airflow 3's CronTriggerTimetable; a named timetable
// and other schedules keep theirs, and a changed default is a new version.
func TestCronTriggersForCronSchedulesWithoutATimetable(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	p.CronTriggers = true
	dag := func(id, schedule, timetable string) string {
		return "dag_id: " + id + "\nschedule: \"" + schedule + "\"\nstart_date: 2024-01-01\n" + timetable +
			"tasks:\n  - task_id: t\n    operator: noop\n"
	}
	write(t, filepath.Join(dir, "a.yaml"), dag("daily", "@daily", ""))
	write(t, filepath.Join(dir, "b.yaml"), dag("weekdays", "0 9 * * 1-5", "timetable: CronDataIntervalTimetable\n"))
	write(t, filepath.Join(dir, "c.yaml"), dag("halfhourly", "30m", ""))
	syncOnce(t, p)
	timetableOf := func(id string) (string, int64) {
		t.Helper()
		v, err := storeOf(p).DagVersionLatest(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return v.Spec.Timetable, v.ID
	}
	for id, want := range map[string]string{"daily": "CronTriggerTimetable", "weekdays": "CronDataIntervalTimetable", "halfhourly": ""} {
		if got, _ := timetableOf(id); got != want {
			t.Errorf("%s: timetable %q, want %q", id, got, want)
		}
	}
	_, before := timetableOf("daily")
	p.CronTriggers = false
	syncOnce(t, p)
	if got, v := timetableOf("daily"); got != "" || v == before {
		t.Errorf("after the default changed: timetable %q (version %d, was %d), want none in a new version", got, v, before)
	}
}

// storeOf is the whole store behind p, for the test's own reads.
func storeOf(p *Processor) store.Store { return p.Store.(store.Store) }

// Issue 13 finding 1: a hostile DAG file ("[" × 100,000, which drove the
// scheduler past 4 GB) and a file over [dag_processor] max_file_bytes are
// import errors naming the file and the limit; the other files' DAGs load.
func TestHostileFilesAreImportErrors(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	good, deep, big := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "deep.yaml"), filepath.Join(dir, "big.yaml")
	write(t, good, dagYAML("good", "echo ok"))
	write(t, deep, strings.Repeat("[", 100000))
	bigYAML := dagYAML("big", "echo x")
	write(t, big, bigYAML+strings.Repeat("#", dagfile.DefaultMaxFileBytes+1-len(bigYAML))) // one byte too many
	syncOnce(t, p)
	if dagState(t, p, "good") == nil || dagState(t, p, "big") != nil {
		t.Errorf("good = %v, big = %v; want only good", dagState(t, p, "good"), dagState(t, p, "big"))
	}
	errs := importErrors(t, p)
	if got := errs[deep]; got != deep+":1:64: nesting deeper than 64 levels, the limit of a DAG file" {
		t.Errorf("import error of the deep file: %q", got)
	}
	if got := errs[big]; !strings.HasPrefix(got, big+": the file is 1048577 bytes, over the limit of 1048576 bytes ([dag_processor] max_file_bytes)") {
		t.Errorf("import error of the large file: %q", got)
	}
}
