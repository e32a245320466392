package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// openStore opens the configured database. With migrate it applies pending
// migrations; otherwise it refuses a database whose schema is behind. log
// notes SQLite files whose modes were tightened and, with checkRoom (a
// role's start), a PostgreSQL pool that does not fit in what the server
// has left (postgres.Room). readConns sizes a SQLite read pool (0 = the
// default).
func openStore(ctx context.Context, cfg *config.Config, migrate, checkRoom bool, readConns int, log *slog.Logger) (*sqlstore.Store, error) {
	if err := cfg.DatabaseForgottenError(); err != nil {
		return nil, err
	}
	engine, target, err := cfg.Database.Parse()
	if err != nil {
		return nil, fmt.Errorf("[database] conn: %w", err)
	}
	box, err := secretsBox(cfg)
	if err != nil {
		return nil, err
	}
	var st *sqlstore.Store
	switch engine {
	case "sqlite":
		if _, err := os.Stat(target); !migrate && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sqlite database %s does not exist: run `weir db migrate` (or `weir standalone`)", target)
		}
		st, err = sqlite.Open(ctx, target, sqlite.Options{Logger: log, Secrets: box, ReadConns: readConns})
	default:
		opts := postgres.Options{Secrets: box, MaxConns: cfg.Database.PoolSize}
		if checkRoom {
			opts.CheckRoom, opts.Logger = true, log
		}
		st, err = postgres.Open(ctx, target, opts)
	}
	if err != nil {
		return nil, err // each engine's Open names the database
	}
	if migrate {
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, err
		}
		if from, to, ok := st.Migrated(); ok && log != nil {
			log.Info("migrated the database schema", "engine", engine, "from_version", from, "to_version", to)
		}
		return st, nil
	}
	status, err := st.MigrationStatus(ctx)
	if err != nil {
		st.Close()
		return nil, err
	}
	if len(status.Pending) > 0 {
		st.Close()
		return nil, fmt.Errorf("%s database schema is at version %d, latest is %d: run `weir db migrate`",
			engine, status.Current, status.Latest)
	}
	return st, nil
}

// newService builds the service layer over st from the configuration.
func newService(cfg *config.Config, st store.Store, logger *slog.Logger, opts *Options) *service.Service {
	return service.New(serviceConfig(cfg, st, logger, opts))
}

// serviceConfig is the service layer's configuration. Whether try ends
// share transactions is service.GroupTryEnds's, without measuring the
// database's round trip: an api-server measures it (buildAPIServer).
func serviceConfig(cfg *config.Config, st store.Store, logger *slog.Logger, opts *Options) service.Config {
	runIDs, _ := cfg.Scheduler.RunIDRegexp() // Validate refused a bad pattern; nil = the default
	group, _ := service.GroupTryEnds(cfg.Database.GroupTryEnds, st.Dialect(), nil)
	return service.Config{Store: st, Logger: logger, ClearTaskStateOnSuccess: cfg.StateStore.ClearOnSuccess,
		RunIDPattern: runIDs, Triggers: opts.triggerTypes, StreamMaxPending: cfg.Triggerer.StreamMaxPending,
		MaxCallbackChainDepth: cfg.Callbacks.MaxChainDepth, OnlyDagID: opts.onlyDagID, OnQueued: opts.metrics.TasksQueued,
		GroupTryEnds: group,
		Deferrals:    runs.DeferralRules{TaskTriggerTypes: cfg.Triggerer.TaskTriggerTypes, AllowAnyConnection: cfg.Core.AllowAnyConnection}}
}

// withService loads the configuration, opens the store and runs fn with
// the service over it; the CLI acts as a.cliActor().
func (a *app) withService(ctx context.Context, fn func(*config.Config, *service.Service) error) error {
	return a.withStore(ctx, func(cfg *config.Config, st *sqlstore.Store) error {
		return fn(cfg, newService(cfg, st, nil, a.opts))
	})
}

// withStore loads the configuration, opens the store and runs fn. A
// command running in remote mode (chooseTransport) is refused: it has no
// remote transport yet.
func (a *app) withStore(ctx context.Context, fn func(*config.Config, *sqlstore.Store) error) error {
	if a.remote != nil {
		return notRemote(a.remoteCmd)
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	st, err := openStore(ctx, cfg, false, false, 0, newLogger(a.opts.Stderr, cfg.Logging.Level))
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(cfg, st)
}
