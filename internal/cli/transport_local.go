package cli

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// localBackend is the backend over the local database: the service layer
// for changes (acting as the CLI's actor), the store for reads.
type localBackend struct {
	cfg   *config.Config
	svc   *service.Service
	actor core.Actor
}

var _ backend = (*localBackend)(nil)

// DagList implements backend.
func (b *localBackend) DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, int, error) {
	return store.List(ctx, p, b.svc.Store().DagList, b.svc.Store().DagCount)
}

// DagTasks implements backend.
func (b *localBackend) DagTasks(ctx context.Context, dagID string) ([]api.TaskResponse, error) {
	if err := b.dagExists(ctx, dagID); err != nil {
		return nil, err
	}
	v, err := b.svc.Store().DagVersionLatest(ctx, dagID)
	if err != nil {
		return nil, fmt.Errorf("latest version of dag_id %q: %w", dagID, err)
	}
	return api.TaskResponses(&v.Spec), nil
}

// DagSetPaused implements backend.
func (b *localBackend) DagSetPaused(ctx context.Context, dagID string, paused bool) error {
	_, err := b.svc.SetDagPaused(ctx, b.actor, dagID, paused)
	return err
}

// ImportErrorList implements backend.
func (b *localBackend) ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, int, error) {
	return store.List(ctx, p, b.svc.Store().ImportErrorList, b.svc.Store().ImportErrorCount)
}

// DagRunTrigger implements backend.
func (b *localBackend) DagRunTrigger(ctx context.Context, p runs.TriggerParams) (*core.DagRun, error) {
	return b.svc.TriggerRun(ctx, b.actor, p)
}

// dagExists fails, as the API does, for a DAG the database does not know.
func (b *localBackend) dagExists(ctx context.Context, dagID string) error {
	if _, err := b.svc.Store().DagGet(ctx, dagID); err != nil {
		return fmt.Errorf("dag_id %q: %w", dagID, err)
	}
	return nil
}

// DagRunList implements backend: runs of a DAG the database does not know
// are an error, not an empty list.
func (b *localBackend) DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, int, error) {
	if p.DagID != "" {
		if err := b.dagExists(ctx, p.DagID); err != nil {
			return nil, 0, err
		}
	}
	return store.List(ctx, p, b.svc.Store().DagRunList, b.svc.Store().DagRunCount)
}

// PoolList implements backend.
func (b *localBackend) PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, int, error) {
	return store.List(ctx, p, b.svc.Store().PoolList, b.svc.Store().PoolCount)
}

// PoolSave implements backend.
func (b *localBackend) PoolSave(ctx context.Context, ch service.PoolChange) (*core.Pool, error) {
	return b.svc.SavePool(ctx, b.actor, ch)
}

// PoolDelete implements backend.
func (b *localBackend) PoolDelete(ctx context.Context, name string) error {
	return b.svc.DeletePool(ctx, b.actor, name)
}

// ConnectionList implements backend.
func (b *localBackend) ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, int, error) {
	conns, total, err := store.List(ctx, p, b.svc.Store().ConnectionList, b.svc.Store().ConnectionCount)
	for i := range conns {
		conns[i].URI = api.ShownURI(conns[i])
	}
	return conns, total, err
}

// ConfigConnections implements backend: the connections of this machine's
// weir.toml and WEIR_CONN_<ID>.
func (b *localBackend) ConfigConnections() map[string]string { return b.cfg.Connections }

// ConnectionAdd implements backend: an existing connection is replaced.
func (b *localBackend) ConnectionAdd(ctx context.Context, c core.Connection) error {
	return b.svc.SaveConnection(ctx, b.actor, c, true)
}

// ConnectionDelete implements backend.
func (b *localBackend) ConnectionDelete(ctx context.Context, id string) error {
	return b.svc.DeleteConnection(ctx, b.actor, id)
}

// VariableList implements backend.
func (b *localBackend) VariableList(ctx context.Context, p *store.VariableListParams) ([]core.Variable, int, error) {
	return store.List(ctx, p, b.svc.Store().VariableList, b.svc.Store().VariableCount)
}

// VariableGet implements backend.
func (b *localBackend) VariableGet(ctx context.Context, key string) (*core.Variable, error) {
	v, err := b.svc.Store().VariableGet(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("variable %q: %w", key, err)
	}
	return v, nil
}

// VariableSet implements backend.
func (b *localBackend) VariableSet(ctx context.Context, v core.Variable, keepDescription bool) error {
	return b.svc.SaveVariable(ctx, b.actor, v, service.VariableWrite{KeepDescription: keepDescription})
}

// VariableDelete implements backend.
func (b *localBackend) VariableDelete(ctx context.Context, key string) error {
	return b.svc.DeleteVariable(ctx, b.actor, key)
}

// DagRunGet implements backend.
func (b *localBackend) DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error) {
	run, err := b.svc.Store().DagRunGet(ctx, dagID, runID)
	if err != nil {
		return nil, fmt.Errorf("dag_id %q dag_run_id %q: %w", dagID, runID, err)
	}
	return run, nil
}

// TaskInstancesOfRun implements backend.
func (b *localBackend) TaskInstancesOfRun(ctx context.Context, dagID, runID string) ([]core.TaskInstance, error) {
	run, err := b.DagRunGet(ctx, dagID, runID)
	if err != nil {
		return nil, err
	}
	tis, err := b.svc.Store().TaskInstanceList(ctx, &store.TaskInstanceListParams{DagRunID: run.ID})
	if err != nil {
		return nil, err
	}
	api.WithTriggers(ctx, b.svc.Store(), tis)
	return tis, nil
}

// Clear implements backend.
func (b *localBackend) Clear(ctx context.Context, p service.ClearParams) ([]core.TaskInstance, error) {
	return b.svc.Clear(ctx, b.actor, p)
}

// AssetList implements backend.
func (b *localBackend) AssetList(ctx context.Context, p *store.AssetListParams) ([]core.AssetModel, int, error) {
	return store.List(ctx, p, b.svc.Store().AssetList, b.svc.Store().AssetCount)
}

// UserCreate implements backend.
func (b *localBackend) UserCreate(ctx context.Context, username, password string, role core.Role) error {
	return b.svc.CreateUser(ctx, b.actor, username, password, role)
}

// DagWarningList implements backend.
func (b *localBackend) DagWarningList(ctx context.Context, p *store.DagWarningListParams) ([]core.DagWarning, int, error) {
	return store.List(ctx, p, b.svc.Store().DagWarningList, b.svc.Store().DagWarningCount)
}

// MasksSecrets implements backend: the database has every value.
func (b *localBackend) MasksSecrets() bool { return false }
