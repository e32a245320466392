package config

import (
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/objstore"
)

// validateStateStore checks [state_store] and [workers] state_backend
// (docs/requirements.md#cfg-1; negative values are rejected at start, TS-3).
func (c *Config) validateStateStore() []error {
	var errs []error
	s := c.StateStore
	if s.Backend != MetastoreBackend {
		if err := CheckStateBackendName(s.Backend); err != nil {
			errs = append(errs, fmt.Errorf("[state_store] backend: %w (\"metastore\" = Weir's database, the default)", err))
		}
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
	switch b := w.StateBackend; {
	case b == "":
	case backendName().MatchString(b):
		if err := CheckStateBackendName(b); err != nil {
			errs = append(errs, fmt.Errorf("[workers] state_backend: %w; leave it empty for values in the database", err))
		}
	default:
		if err := objstore.CheckURL(b); err != nil {
			errs = append(errs, fmt.Errorf("[workers] state_backend: %w (empty = values in the database; a name = a backend the program registers)", err))
		}
	}
	// A custom [state_store] backend runs where [workers] state_backend
	// does: the workers take it from there.
	if s.Backend != MetastoreBackend {
		switch w.StateBackend {
		case "":
			w.StateBackend, w.StateStoreBackend = s.Backend, s.Backend
		case s.Backend:
		default:
			errs = append(errs, fmt.Errorf("[state_store] backend %q and [workers] state_backend %q differ: both say where task and asset state values are kept; set one",
				s.Backend, w.StateBackend))
		}
	}
	return errs
}

// MetastoreBackend is [state_store] backend's default: values in Weir's
// database.
const MetastoreBackend = "metastore"

// backendName is the form of a custom state backend's name.
var backendName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,62}$`) })

// CheckStateBackendName reports whether name can name a custom state
// backend (weir.WithStateBackend): a letter, then up to 62 letters,
// digits, "_", "-" or "."; "metastore" is taken by the default. Whether a
// program registers it is checked where it is used (the worker and the
// in-task CLI), since every process reads the same configuration.
func CheckStateBackendName(name string) error {
	if name == MetastoreBackend {
		return fmt.Errorf("state backend name %q is the built-in default, not a custom backend's", name)
	}
	if !backendName().MatchString(name) {
		return fmt.Errorf("state backend name %q: want a letter, then up to 62 letters, digits, \"_\", \"-\" or \".\"", name)
	}
	return nil
}

// defaultStateStore is [state_store] before any file or environment.
func defaultStateStore() StateStore {
	return StateStore{Backend: MetastoreBackend, DefaultRetentionDays: 30, MaxValueBytes: 65536, AssetStateOrphanRetentionDays: 30,
		ObjectGrace: Duration(time.Hour)}
}
