package config

import (
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/objstore"
)

// validateStateStore checks [state_store] and [workers] state_backend
// (docs/requirements.md#cfg-1; negative values are rejected at start, TS-3).
func (c *Config) validateStateStore() []error {
	var errs []error
	s := c.StateStore
	if s.Backend != "metastore" {
		errs = append(errs, fmt.Errorf("[state_store] backend: %q is not a known backend; the only one is \"metastore\"", s.Backend))
	}
	for name, v := range map[string]int{
		"default_retention_days":            s.DefaultRetentionDays,
		"state_cleanup_batch_size":          s.StateCleanupBatchSize,
		"asset_state_orphan_retention_days": s.AssetStateOrphanRetentionDays,
	} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("[state_store] %s: must not be negative, got %d", name, v))
		}
	}
	if s.MaxValueBytes < 1 {
		errs = append(errs, fmt.Errorf("[state_store] max_value_bytes: must be at least 1, got %d", s.MaxValueBytes))
	}
	if s.CleanupInterval < 0 {
		errs = append(errs, fmt.Errorf("[state_store] cleanup_interval: must not be negative (0s = off), got %s", s.CleanupInterval))
	}
	if s.ObjectGrace.D() < time.Minute {
		errs = append(errs, fmt.Errorf("[state_store] object_grace: must be at least 1m, got %s", s.ObjectGrace))
	}
	if c.Workers.StateSweepInterval.D() < time.Second {
		errs = append(errs, fmt.Errorf("[workers] state_sweep_interval: must be at least 1s, got %s", c.Workers.StateSweepInterval))
	}
	w := &c.Workers
	switch {
	case w.StateStoreBackend == "":
		w.StateStoreBackend = w.StateBackend
	case w.StateBackend == "":
		w.StateBackend = w.StateStoreBackend
	case w.StateBackend != w.StateStoreBackend:
		errs = append(errs, fmt.Errorf("[workers] state_store_backend %q and state_backend %q differ: they are one option (Airflow's name and Weir's); set one",
			w.StateStoreBackend, w.StateBackend))
	}
	if c.Workers.StateBackend != "" {
		if err := objstore.CheckURL(c.Workers.StateBackend); err != nil {
			errs = append(errs, fmt.Errorf("[workers] state_backend: %w (empty = values in the database)", err))
		}
	}
	return errs
}

// defaultStateStore is [state_store] before any file or environment.
func defaultStateStore() StateStore {
	return StateStore{Backend: "metastore", DefaultRetentionDays: 30, MaxValueBytes: 65536, AssetStateOrphanRetentionDays: 30,
		ObjectGrace: Duration(time.Hour)}
}
