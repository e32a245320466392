package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
	"github.com/weirflow/weir/internal/stateobj"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// stateBackendDAG stores a 70,002-byte value (over the default
// max_value_bytes of 65,536) and a scratch key with the in-task CLI on try
// 1 and fails; try 2 reads the value back and deletes the scratch key.
const stateBackendDAG = `dag_id: state_backend
schedule: null
tasks:
  - task_id: big
    operator: bash
    retries: 1
    retry_delay: 1s
    bash_command: |
      set -e
      if [ "$WEIR_TRY_NUMBER" = 1 ]; then
        weir task-state set big "$(printf '"%070000d"' 0)"
        weir task-state set scratch '{"tmp": true}'
        echo "try 1 stored the payload"
        exit 1
      fi
      v=$(weir task-state get big)
      echo "try $WEIR_TRY_NUMBER read ${#v} bytes"
      weir task-state delete scratch
      echo "scratch after delete: $(weir task-state get scratch --default '"gone"')"
`

// assetBackendDAG stores a 70,002-byte value (over the default
// max_value_bytes of 65,536) in asset big_events' state, named by uri, in
// run a1; run a2 reads it back by name, and sets and deletes a scratch key
// (by name, then by uri).
const assetBackendDAG = `dag_id: asset_backend
schedule: null
assets:
  - {name: big_events, uri: "file:///tmp/weir-e2e/big_events"}
tasks:
  load:
    operator: bash
    outlets: [big_events]
    bash_command: |
      set -e
      if [ "$WEIR_RUN_ID" = a1 ]; then
        weir asset-state --uri file:///tmp/weir-e2e/big_events set payload "$(printf '"%070000d"' 0)"
        echo "a1 stored the payload"
        exit 0
      fi
      v=$(weir asset-state --name big_events get payload)
      echo "a2 read ${#v} bytes by name"
      weir asset-state --name big_events set scratch '{"tmp": true}'
      weir asset-state --uri file:///tmp/weir-e2e/big_events delete scratch
      echo "scratch after delete: $(weir asset-state get scratch --default '"gone"')"
`

// TestStateBackendLargeValues runs the built binary's standalone with
// [workers] state_backend = file://DIR (docs/requirements.md#be-2), for
// both kinds of state: bash tasks store values larger than
// max_value_bytes with `weir task-state set` (read back by the retry) and
// `weir asset-state --uri ... set` (read back by name in the next run); the
// database (seen through the REST API) holds only the references, the
// directory the values; the objects of deleted and replaced values, and of
// a key an admin deletes over REST, are removed by the worker's sweep.
func TestStateBackendLargeValues(t *testing.T) {
	t.Parallel()
	home, dags, state := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "state")
	writeFile(t, filepath.Join(dags, "state_backend.yaml"), stateBackendDAG)
	writeFile(t, filepath.Join(dags, "asset_backend.yaml"), assetBackendDAG)
	s := startStandalone(t, home, dags, "WEIR__WORKERS__STATE_BACKEND=file://"+state, "WEIR__WORKERS__STATE_SWEEP_INTERVAL=1s")
	api := s.api

	api.WaitDAG("state_backend")
	api.WaitDAG("asset_backend")
	api.Trigger("state_backend", "s1", nil)
	api.Trigger("asset_backend", "a1", nil)
	api.WaitRunSuccess("asset_backend", "a1")
	api.Trigger("asset_backend", "a2", nil)
	api.WaitRunSuccess("asset_backend", "a2")
	api.WaitRunSuccess("state_backend", "s1")
	tries := api.Tries("state_backend", "s1", "big")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].State != core.TISuccess {
		t.Fatalf("tries of big = %+v, want try 1 failed and try 2 success", tries)
	}
	for _, l := range []struct{ log, read string }{
		{api.Log("state_backend", "s1", "big", 2), "try 2 read 70002 bytes"},
		{api.Log("asset_backend", "a2", "load", 1), "a2 read 70002 bytes by name"},
	} {
		if !strings.Contains(l.log, l.read) || !strings.Contains(l.log, `scratch after delete: "gone"`) {
			t.Errorf("the task did not read the value back (%q) or delete scratch; log:\n%s", l.read, l.log)
		}
	}

	var list struct {
		Entries []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		} `json:"entries"`
	}
	taskPath := runPath("state_backend", "s1") + "/taskInstances/big/state-store"
	api.Get(taskPath, &list)
	if len(list.Entries) != 1 || list.Entries[0].Key != "big" {
		t.Fatalf("task state over REST = %+v, want only big", list.Entries)
	}
	taskRef, ok := stateobj.Decode(list.Entries[0].Value)
	if !ok || !strings.HasPrefix(taskRef, "task/state_backend/s1/big/-1/big/") {
		t.Errorf("task state big over REST = %s, want only its reference", list.Entries[0].Value)
	}
	got := api.assetStateEntries("big_events")
	assetRef, ok := stateobj.Decode(got["payload"])
	if len(got) != 1 || !ok || !strings.HasPrefix(assetRef, "asset/big_events/payload/") {
		t.Errorf("asset state over REST = %s, want only payload holding its reference", got)
	}
	st, err := objstore.NewFS(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{taskRef, assetRef} {
		if v, err := st.Get(context.Background(), ref); err != nil || len(v) != 70002 {
			t.Errorf("object %s: %d bytes, %v; want 70002", ref, len(v), err)
		}
	}
	// The scratch keys' objects (deleted, or replaced by try 2 and a2) and
	// then an admin's delete over REST: the worker's sweep removes them.
	objects := func() []string {
		keys, err := st.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	wait.Until(t, time.Minute, "the sweep to leave one object per stored key", func() bool {
		return slices.Equal(objects(), []string{assetRef, taskRef})
	})
	if code, body := api.Do(http.MethodDelete, taskPath+"/big", nil); code != http.StatusNoContent {
		t.Fatalf("admin delete of big: %d %s", code, body)
	}
	wait.Until(t, time.Minute, "the sweep to delete the object of the key an admin deleted", func() bool {
		return slices.Equal(objects(), []string{assetRef})
	})
}
