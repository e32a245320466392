package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/objstore"
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

// TestStateBackendLargeValue runs the built binary's standalone with
// [workers] state_backend = file://DIR (docs/requirements.md#be-2): a bash task stores a
// value larger than max_value_bytes with `weir task-state set`, its retry
// reads it back, and the database (seen through the REST API) holds only
// the reference while the directory holds the value; a delete removes the
// object too.
func TestStateBackendLargeValue(t *testing.T) {
	t.Parallel()
	home, dags, state := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "state")
	writeFile(t, filepath.Join(dags, "state_backend.yaml"), stateBackendDAG)
	s := startStandalone(t, home, dags, "WEIR__WORKERS__STATE_BACKEND=file://"+state)
	api := s.api

	api.waitDAG("state_backend")
	api.trigger("state_backend", "s1", nil)
	api.waitRunSuccess("state_backend", "s1")
	tries := api.tries("state_backend", "s1", "big")
	if len(tries) != 2 || !failedTry(tries[0]) || tries[1].State != core.TISuccess {
		t.Fatalf("tries of big = %+v, want try 1 failed and try 2 success", tries)
	}
	if log := api.log("state_backend", "s1", "big", 2); !strings.Contains(log, "try 2 read 70002 bytes") ||
		!strings.Contains(log, `scratch after delete: "gone"`) {
		t.Errorf("try 2 did not read the value back or delete scratch; log:\n%s", log)
	}

	var list struct {
		Entries []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		} `json:"entries"`
	}
	api.get(runPath("state_backend", "s1")+"/taskInstances/big/state-store", &list)
	if len(list.Entries) != 1 || list.Entries[0].Key != "big" ||
		string(list.Entries[0].Value) != `{"__weir_state_ref__":"task/state_backend/s1/big/-1/big"}` {
		t.Errorf("REST API entries = %+v, want only big holding its reference", list.Entries)
	}
	st, err := objstore.NewFS(state)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := st.Get(context.Background(), "task/state_backend/s1/big/-1/big"); err != nil || len(v) != 70002 {
		t.Errorf("object of big: %d bytes, %v; want 70002", len(v), err)
	}
	if keys, err := st.List(context.Background(), ""); err != nil || len(keys) != 1 {
		t.Errorf("objects = %v, %v; want only big's (scratch's deleted with its key)", keys, err)
	}
}
