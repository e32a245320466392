package tasklog_test

import (
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tasklog"
)

// A log's name in the database is its path in the folder layout, relative
// and with forward slashes, so both stores file a try's log alike; a key
// the folder refuses is refused too.
func TestNameIsTheFolderPath(t *testing.T) {
	t.Parallel()
	key := tasklog.Key{DagID: "etl/x", RunID: "r1", TaskID: "load", MapIndex: 2, TryNumber: 3}
	name, err := tasklog.Name(key)
	if err != nil {
		t.Fatal(err)
	}
	if want := "dag_id=etl%2Fx/run_id=r1/task_id=load/map_index=2/attempt=3.log"; name != want {
		t.Errorf("Name = %q, want %q", name, want)
	}
	p, err := tasklog.Path("/base", key)
	if err != nil || p != filepath.Join("/base", filepath.FromSlash(name)) {
		t.Errorf("Path = %q, %v; want /base/%s", p, err, name)
	}
	if _, err := tasklog.Name(tasklog.Key{DagID: "d", RunID: "r", MapIndex: core.NoMapIndex}); err == nil {
		t.Error("Name of a key without a task id succeeded")
	}
}
