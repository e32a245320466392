package dirwatch_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/dirwatch"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// TestNewAndChangedFilesEachOnceAcrossARestart: the files present at the
// first poll, then each new or rewritten file, are reported once; a run
// started again from the committed cursor reports only what came since.
func TestNewAndChangedFilesEachOnceAcrossARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.csv", "1")
	write(t, dir, "b.csv", "22")
	write(t, dir, "notes.txt", "x")
	tr := triggertest.New(t, dirwatch.Type, `{"path":"`+dir+`","glob":"*.csv","poll_interval":"10ms"}`)
	w := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "orders"})
	run := w.Start(t, tr, nil)
	first := w.WaitEvents(t, "orders", 2)
	p := payload(t, first[0])
	if p.Path != filepath.Join(dir, "a.csv") || p.Name != "a.csv" || p.Size != 1 || p.Modified.IsZero() {
		t.Errorf("first event = %+v, want a.csv of 1 byte with its path and time", p)
	}
	write(t, dir, "a.csv", "333") // rewritten: reported again
	write(t, dir, "c.csv", "4")
	want := []string{"a.csv", "b.csv", "a.csv", "c.csv"}
	if got := names(t, w.WaitEvents(t, "orders", 4)); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	run.Cancel(t)

	again := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "orders"})
	again.SetCursor("orders", w.Cursor("orders"))
	again.Start(t, tr, nil)
	write(t, dir, "d.csv", "5")
	if got := names(t, again.WaitEvents(t, "orders", 1)); !slices.Equal(got, []string{"d.csv"}) {
		t.Errorf("after a restart from the cursor: events = %v, want only d.csv", got)
	}
}

// TestAFileMovedInWithAnOldTimeIsNew: moving a file written earlier into
// the folder (its modification time older than the cursor) reports it.
func TestAFileMovedInWithAnOldTimeIsNew(t *testing.T) {
	t.Parallel()
	dir, staging := t.TempDir(), t.TempDir()
	write(t, staging, "late.csv", "x")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(staging, "late.csv"), old, old); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "first.csv", "x")
	w := watch(t, `{"path":"`+dir+`","poll_interval":"10ms"}`, trigger.AssetInfo{Name: "a"})
	w.WaitEvents(t, "a", 1)
	if err := os.Rename(filepath.Join(staging, "late.csv"), filepath.Join(dir, "late.csv")); err != nil {
		t.Fatal(err)
	}
	evs := w.WaitEvents(t, "a", 2)
	if got := names(t, evs); !slices.Equal(got, []string{"first.csv", "late.csv"}) {
		t.Errorf("events = %v, want first.csv then late.csv", got)
	}
	if p := payload(t, evs[1]); p.Modified.Sub(old).Abs() > time.Second {
		t.Errorf("late.csv modified = %s, want its own modification time %s", p.Modified, old)
	}
}

// TestRecursiveRoutesBySubfolder: with recursive, files in subfolders are
// reported with their relative paths matched by route; a file no route
// matches, a hidden file and a hidden folder are not reported.
func TestRecursiveRoutesBySubfolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "eu/1.csv", "x")
	write(t, dir, "us/1.csv", "x")
	write(t, dir, "asia/1.csv", "x")
	write(t, dir, "eu/.1.csv.tmp", "x")
	write(t, dir, ".cache/eu/2.csv", "x")
	w := watch(t, `{"path":"`+dir+`","recursive":true,"route":{"eu_orders":"eu/*","us_orders":"us/*"},"poll_interval":"10ms"}`, trigger.AssetInfo{Name: "eu_orders"}, trigger.AssetInfo{Name: "us_orders"})
	w.WaitEvents(t, "eu_orders", 1)
	write(t, dir, "us/2.csv", "x") // the newest: once it is reported, every older file was considered
	w.WaitEvents(t, "us_orders", 2)
	eu, us := paths(t, dir, w.Events("eu_orders")), paths(t, dir, w.Events("us_orders"))
	if !slices.Equal(eu, []string{"eu/1.csv"}) || !slices.Equal(us, []string{"us/1.csv", "us/2.csv"}) {
		t.Errorf("eu_orders got %v, us_orders got %v; want eu/1.csv and us/1.csv, us/2.csv", eu, us)
	}
}

// TestNotRecursiveSkipsSubfolders: without recursive only the folder's own
// files are reported.
func TestNotRecursiveSkipsSubfolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "sub/deep.csv", "x")
	write(t, dir, "top.csv", "x")
	w := watch(t, `{"path":"`+dir+`","poll_interval":"10ms"}`, trigger.AssetInfo{Name: "a"})
	w.WaitEvents(t, "a", 1)
	write(t, dir, "top2.csv", "x")
	if got := names(t, w.WaitEvents(t, "a", 2)); !slices.Equal(got, []string{"top.csv", "top2.csv"}) {
		t.Errorf("events = %v, want top.csv and top2.csv only", got)
	}
}

// TestAFolderThroughALink: path may be a symbolic link to the folder; the
// events name the files under path as written.
func TestAFolderThroughALink(t *testing.T) {
	t.Parallel()
	folder, link := t.TempDir(), filepath.Join(t.TempDir(), "landing")
	if err := os.Symlink(folder, link); err != nil {
		t.Fatal(err)
	}
	write(t, folder, "x.csv", "x")
	w := watch(t, `{"path":"`+link+`","poll_interval":"10ms"}`, trigger.AssetInfo{Name: "a"})
	if p := payload(t, w.WaitEvents(t, "a", 1)[0]); p.Path != filepath.Join(link, "x.csv") {
		t.Errorf("event path = %s, want it under the link %s", p.Path, link)
	}
}

// TestAMissingFolderIsAPollErrorRetried: the poll fails (shown in health)
// and the watcher keeps polling; once the folder exists its files come.
func TestAMissingFolderIsAPollErrorRetried(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "later")
	w := watch(t, `{"path":"`+dir+`","poll_interval":"10ms"}`, trigger.AssetInfo{Name: "a"})
	deadline := time.Now().Add(triggertest.Bound)
	for len(w.PollErrors()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no poll error recorded for a missing folder")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.PollErrors()[0]; !strings.Contains(err.Error(), dir) {
		t.Errorf("poll error = %v, want it to name the folder", err)
	}
	write(t, dir, "x.csv", "x")
	w.WaitEvents(t, "a", 1)
}

// TestAFileDatedInTheFutureDoesNotHideLaterFiles: a file whose
// modification time is two hours ahead (touch -d, a copy from a machine
// whose clock is ahead) waits for its time, and the trigger log says so;
// the files written after it are reported as they come.
func TestAFileDatedInTheFutureDoesNotHideLaterFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "future.csv", "x")
	ahead := time.Now().Add(2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "future.csv"), ahead, ahead); err != nil {
		t.Fatal(err)
	}
	w := triggertest.NewWatcher("landing", trigger.AssetInfo{Name: "a"})
	run := w.Start(t, triggertest.New(t, dirwatch.Type, `{"path":"`+dir+`","poll_interval":"10ms"}`), nil)
	write(t, dir, "now.csv", "x")
	if got := names(t, w.WaitEvents(t, "a", 1)); !slices.Equal(got, []string{"now.csv"}) {
		t.Errorf("events = %v, want now.csv alone (future.csv waits for its time)", got)
	}
	write(t, dir, "next.csv", "x")
	if got := names(t, w.WaitEvents(t, "a", 2)); !slices.Equal(got, []string{"now.csv", "next.csv"}) {
		t.Errorf("events = %v, want now.csv then next.csv", got)
	}
	if log := run.Log(); !strings.Contains(log, "1 item(s) dated in the future wait for their time, the soonest future.csv at "+ahead.UTC().Format(time.RFC3339)) {
		t.Errorf("trigger log = %q, want it to name future.csv and its time", log)
	}
}

// TestMinAgeWaitsUntilAFileIsOldEnough: a file is reported no sooner than
// min_age after it was last written.
func TestMinAgeWaitsUntilAFileIsOldEnough(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := watch(t, `{"path":"`+dir+`","min_age":"300ms","poll_interval":"10ms"}`, trigger.AssetInfo{Name: "a"})
	write(t, dir, "x.csv", "x")
	p := payload(t, w.WaitEvents(t, "a", 1)[0])
	if age := time.Since(p.Modified); age < 300*time.Millisecond {
		t.Errorf("x.csv was reported %s after it was written, before min_age", age)
	}
}

func TestKwargsRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ kwargs, want string }{
		{`{}`, `kwarg "path" is required`},
		{`{"path":"in"}`, `kwarg "path" must be absolute`},
		{`{"path":"/in/*.csv"}`, `kwarg "path" must be a folder, not a glob`},
		{`{"path":"/in","glob":"[a-"}`, `kwarg "glob" must be a glob of file names`},
		{`{"path":"/in","glob":"sub/*.csv"}`, `kwarg "glob" must be a glob of file names`},
		{`{"path":"/in","recursive":"yes"}`, `kwarg "recursive" must be true or false`},
		{`{"path":"/in","route":{}}`, `kwarg "route" must map at least one asset`},
		{`{"path":"/in","route":{"a":"[x"}}`, `kwarg "route" holds "[x" for asset "a", which is not a valid glob`},
		{`{"path":"/in","route":{"a":1}}`, `kwarg "route" must be a string`},
		{`{"path":"/in","max_items":0}`, `kwarg "max_items" must be from 1 to 10000, got 0`},
		{`{"path":"/in","max_items":10001}`, `kwarg "max_items" must be from 1 to 10000`},
		{`{"path":"/in","min_age":"-1s"}`, `kwarg "min_age" must be a duration of 0 or more`},
		{`{"path":"/in","min_age":"soon"}`, `kwarg "min_age" must be a duration`},
		{`{"path":"/in","partition_key":"date=("}`, `kwarg "partition_key" must be a regular expression`},
		{`{"path":"/in","poll_interval":"0s"}`, `kwarg "poll_interval" must be positive`},
		{`{"path":"/in","poke_interval":"1s"}`, `unknown kwarg "poke_interval"`},
	} {
		_, err := dirwatch.Type.New(json.RawMessage(c.kwargs))
		if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid-input error containing %q", c.kwargs, err, c.want)
		}
	}
}

// watch runs a directory watcher of kwargs for assets.
func watch(t *testing.T, kwargs string, assets ...trigger.AssetInfo) *triggertest.Watcher {
	t.Helper()
	w := triggertest.NewWatcher("landing", assets...)
	w.Start(t, triggertest.New(t, dirwatch.Type, kwargs), nil)
	return w
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	// written whole then moved in, as a producer should (a file rewritten
	// in place can be seen half-written: that is what min_age is for)
	tmp := filepath.Join(filepath.Dir(p), ".tmp-"+filepath.Base(p))
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

func payload(t *testing.T, e trigger.WatchEvent) dirwatch.Payload {
	t.Helper()
	return triggertest.Payloads[dirwatch.Payload](t, []trigger.WatchEvent{e})[0]
}

func names(t *testing.T, evs []trigger.WatchEvent) []string {
	t.Helper()
	var out []string
	for _, p := range triggertest.Payloads[dirwatch.Payload](t, evs) {
		out = append(out, p.Name)
	}
	return out
}

func paths(t *testing.T, dir string, evs []trigger.WatchEvent) []string {
	t.Helper()
	var out []string
	for _, p := range triggertest.Payloads[dirwatch.Payload](t, evs) {
		rel, _ := filepath.Rel(dir, p.Path)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}
