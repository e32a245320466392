package cli

import (
	"testing"
	"time"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/store"
)

// dialectOnly is a store that only names its engine.
type dialectOnly struct {
	store.Store
	name string
}

func (d dialectOnly) Dialect() string { return d.name }

// A waiting claim looks again every poll interval on SQLite, whose
// notifications stay in their process, and never on PostgreSQL.
func TestClaimRecheckOnSQLiteOnly(t *testing.T) {
	t.Parallel()
	cfg := config.Defaults(t.TempDir())
	cfg.Scheduler.PollInterval = config.Duration(3 * time.Second)
	if got := claimRecheck(cfg, dialectOnly{name: "sqlite"}); got != 3*time.Second {
		t.Errorf("sqlite: %s, want the poll interval", got)
	}
	if got := claimRecheck(cfg, dialectOnly{name: "postgres"}); got != 0 {
		t.Errorf("postgres: %s, want none", got)
	}
}
