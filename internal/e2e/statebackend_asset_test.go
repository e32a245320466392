package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/objstore"
)

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

// TestStateBackendAssetState runs the built binary's standalone with
// [workers] state_backend = file://DIR (docs/requirements.md#be-2 for asset state): a bash
// task stores a value larger than max_value_bytes with `weir asset-state
// --uri ... set`, the next run reads it with `--name ... get`, and the
// database (seen through the REST API) holds only the reference
// asset/<name>/<key> while the directory holds the value; a delete by uri
// removes the object set by name.
func TestStateBackendAssetState(t *testing.T) {
	t.Parallel()
	home, dags, state := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "state")
	writeFile(t, filepath.Join(dags, "asset_backend.yaml"), assetBackendDAG)
	s := startStandalone(t, home, dags, "WEIR__WORKERS__STATE_BACKEND=file://"+state)
	api := s.api

	api.waitDAG("asset_backend")
	api.trigger("asset_backend", "a1", nil)
	api.waitRunSuccess("asset_backend", "a1")
	api.trigger("asset_backend", "a2", nil)
	api.waitRunSuccess("asset_backend", "a2")
	if log := api.log("asset_backend", "a2", "load", 1); !strings.Contains(log, "a2 read 70002 bytes by name") ||
		!strings.Contains(log, `scratch after delete: "gone"`) {
		t.Errorf("run a2 did not read the value back or delete scratch; log:\n%s", log)
	}

	const ref = "asset/big_events/payload"
	if got := api.assetStateEntries("big_events"); len(got) != 1 ||
		string(got["payload"]) != `{"__weir_state_ref__":"`+ref+`"}` {
		t.Errorf("REST API entries = %s, want only payload holding its reference", got)
	}
	st, err := objstore.NewFS(state)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := st.Get(context.Background(), ref); err != nil || len(v) != 70002 {
		t.Errorf("object of payload: %d bytes, %v; want 70002", len(v), err)
	}
	if keys, err := st.List(context.Background(), ""); err != nil || !slices.Equal(keys, []string{ref}) {
		t.Errorf("objects = %v, %v; want only %s (scratch's deleted with its key)", keys, err, ref)
	}
}
