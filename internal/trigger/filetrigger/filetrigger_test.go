package filetrigger_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirflow/weir/internal/trigger/filetrigger"
	"github.com/weirflow/weir/internal/trigger/triggertest"
)

// TestFiresOnceALargeEnoughFileMatches: a file below min_size, a folder
// and a file of another name do not fire the trigger; the file that does
// is the event's only entry, with its size.
func TestFiresOnceALargeEnoughFileMatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "small.csv"), "ab")
	write(t, filepath.Join(dir, "other.txt"), "a long enough text")
	if err := os.Mkdir(filepath.Join(dir, "folder.csv"), 0o750); err != nil {
		t.Fatal(err)
	}
	kwargs, _ := json.Marshal(map[string]any{"path": filepath.Join(dir, "*.csv"), "min_size": 5, "poke_interval": "10ms"})
	run := triggertest.Start(t, triggertest.New(t, filetrigger.Type, string(kwargs)), nil)
	big := filepath.Join(dir, "big.csv")
	write(t, big, "a,b,c\n")

	var got filetrigger.Payload
	if err := json.Unmarshal(run.Event(t), &got); err != nil {
		t.Fatal(err)
	}
	if got.Count != 1 || len(got.Files) != 1 || got.Files[0].Path != big || got.Files[0].Size != 6 || got.Files[0].MTime.IsZero() {
		t.Errorf("event = %+v, want only %s with size 6 and its mtime", got, big)
	}
	if err := run.Wait(t); err != nil {
		t.Errorf("after its event the trigger returned %v, want nil", err)
	}
}

func TestCancelStopsAWaitingTrigger(t *testing.T) {
	t.Parallel()
	kwargs, _ := json.Marshal(map[string]any{"path": filepath.Join(t.TempDir(), "never")})
	run := triggertest.Start(t, triggertest.New(t, filetrigger.Type, string(kwargs)), nil)
	run.Cancel(t)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
