package service

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// A watcher's partition keys follow the rule of every partition key
// (emission.CheckPartitionKey: 1 to 256 bytes of printable text), so that
// a watcher makes no partition a trigger or a posted event could not name.
func TestAWatchersPartitionKeysFollowTheEmissionRule(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"2026-12-01":             "",
		strings.Repeat("é", 128): "", // 256 bytes
		"line1\nline2":           `an event of asset 7: "partition_key" "line1\nline2" holds a control character`,
		strings.Repeat("é", 129): `an event of asset 7: "partition_key" is 258 bytes, more than the 256 allowed`,
		"":                       `"partition_key" must not be empty`,
	} {
		p := &store.WatcherCommitParams{Events: []store.WatcherEvent{{AssetID: 7, PartitionKey: &key}}}
		err := checkWatch(p)
		switch {
		case want == "" && err != nil:
			t.Errorf("key %.20q: %v, want it accepted", key, err)
		case want != "" && (!errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), want)):
			t.Errorf("key %.20q: %v, want invalid input saying %q", key, err, want)
		}
	}
}
