package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/taskcli"
	"github.com/weirflow/weir/internal/tasklog"
)

// backend is what the admin commands call to read and change a deployment
// (ADR 0020). Two adapters implement it: localBackend, the service layer
// over the local database, and restBackend, the deployment's REST API
// (weir login, --api-url). A command is written once against backend and
// prints the same output whichever transport serves it.
//
// Methods take the store's parameter structs and return core types, so the
// local adapter is a thin call and the REST adapter a translation to the
// API's query and body. Lists return one page and the total, read in the
// database on both sides. Errors wrap core's sentinels on both sides.
type backend interface {
	DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, int, error)
	// DagTasks describes the tasks of the DAG's latest version, with the
	// engine's defaults applied (as GET /dags/{dag_id} does).
	DagTasks(ctx context.Context, dagID string) ([]api.TaskResponse, error)
	DagSetPaused(ctx context.Context, dagID string, paused bool) error
	ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, int, error)
	DagWarningList(ctx context.Context, p *store.DagWarningListParams) ([]core.DagWarning, int, error)

	DagRunTrigger(ctx context.Context, p runs.TriggerParams) (*core.DagRun, error)
	DagRunList(ctx context.Context, p *store.DagRunListParams) ([]core.DagRun, int, error)
	DagRunGet(ctx context.Context, dagID, runID string) (*core.DagRun, error)

	// TaskInstancesOfRun lists the current tries of a run's task instances,
	// each deferred one with its trigger (kwargs masked).
	TaskInstancesOfRun(ctx context.Context, dagID, runID string) ([]core.TaskInstance, error)
	// Clear clears task instances (or, with DryRun, lists what it would).
	Clear(ctx context.Context, p service.ClearParams) ([]core.TaskInstance, error)

	AssetList(ctx context.Context, p *store.AssetListParams) ([]core.AssetModel, int, error)

	// StateList lists state entries: of the asset named asset when it is
	// not "", else those p selects (remotely p must name one task instance).
	StateList(ctx context.Context, p *store.StateListParams, asset string) ([]core.StateEntry, int, error)
	StateGet(ctx context.Context, sc core.StateScope, key string) (*core.StateEntry, error)
	StateDelete(ctx context.Context, sc core.StateScope, key string) error
	StateClear(ctx context.Context, sc core.StateScope, allMapIndices bool) error

	PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, int, error)
	PoolSave(ctx context.Context, ch service.PoolChange) (*core.Pool, error)
	PoolDelete(ctx context.Context, name string) error

	// ConnectionList lists the connections stored in the deployment's
	// database, with their URIs redacted.
	ConnectionList(ctx context.Context, p *store.ConnectionListParams) ([]core.Connection, int, error)
	// ConfigConnections are the connections of this machine's configuration
	// (local transport only; nil remotely).
	ConfigConnections() map[string]string
	ConnectionAdd(ctx context.Context, c core.Connection) error
	ConnectionDelete(ctx context.Context, id string) error

	VariableList(ctx context.Context, p *store.VariableListParams) ([]core.Variable, int, error)
	VariableGet(ctx context.Context, key string) (*core.Variable, error)
	// VariableSet creates or replaces a variable; with keepDescription an
	// existing variable keeps its description.
	VariableSet(ctx context.Context, v core.Variable, keepDescription bool) error
	VariableDelete(ctx context.Context, key string) error
	// MasksSecrets is true when secret-named variables' values read "***"
	// (the REST API), false when they read as stored (the local database).
	MasksSecrets() bool

	// DagDefinition is a DAG's latest version as serialized.
	DagDefinition(ctx context.Context, dagID string) (*api.DagDefinition, error)
	// DagNextRuns lists up to n of a DAG's next scheduled runs.
	DagNextRuns(ctx context.Context, dagID string, n int) (*api.NextRunCollection, error)
	// DagDelete deletes a DAG's metadata and history and returns how many
	// runs it had.
	DagDelete(ctx context.Context, dagID string) (int, error)
	// AssetGetByName is the asset named name, with the DAGs scheduled on
	// it and the tasks producing and consuming it.
	AssetGetByName(ctx context.Context, name string) (*core.AssetModel, error)
	AssetEventList(ctx context.Context, p *store.AssetEventListParams) ([]core.AssetEvent, int, error)
	// AssetMaterialize triggers a run of the one DAG producing an asset.
	AssetMaterialize(ctx context.Context, assetID int64) (*core.DagRun, error)
	// AssetEventCreate records an event of an asset from outside Weir.
	AssetEventCreate(ctx context.Context, assetID int64, r emission.Request) (*api.CreatedAssetEvent, error)
	AssetAliasList(ctx context.Context, p *store.AssetAliasListParams) ([]store.AssetAlias, int, error)
	AssetAliasGet(ctx context.Context, name string) (*store.AssetAlias, error)
	// CallbackList lists the callbacks a run's state changes fired.
	CallbackList(ctx context.Context, dagID, runID string, p *store.CallbackListParams) ([]core.Callback, int, error)

	// Expansion is where a task mapped over a stream stands in one run.
	Expansion(ctx context.Context, dagID, runID, taskID string) (*service.Expansion, error)
	// Stream is a stream's head (docs/streaming.md).
	Stream(ctx context.Context, id string) (*core.Stream, error)
	// WatcherList lists the asset watchers (of the asset named asset when
	// it is not ""; remotely it must be) with their health.
	WatcherList(ctx context.Context, asset string) ([]core.Watcher, error)
	// WatcherSetCursor sets (raw) or resets (nil) a watcher's cursor.
	WatcherSetCursor(ctx context.Context, asset, watcher string, raw []byte) (*core.Watcher, error)
	// DagGet is one DAG.
	DagGet(ctx context.Context, dagID string) (*core.DagModel, error)
	// BackfillCreate creates a backfill (with r.DryRun only plans it) and
	// returns what it does at each logical date.
	BackfillCreate(ctx context.Context, r runs.BackfillRequest) (*service.BackfillResult, error)
	BackfillList(ctx context.Context, p *store.BackfillListParams) ([]core.Backfill, int, error)
	BackfillGet(ctx context.Context, id int64) (*core.Backfill, error)
	// BackfillAction pauses, unpauses or cancels a backfill (action
	// "pause", "unpause" or "cancel").
	BackfillAction(ctx context.Context, id int64, action string) (*core.Backfill, error)

	UserList(ctx context.Context, p *store.UserListParams) ([]api.UserResponse, int, error)
	UserGet(ctx context.Context, username string) (*api.UserResponse, error)
	// UserUpdate changes an existing user's password or role.
	UserUpdate(ctx context.Context, username string, ch service.UserChange) (*api.UserResponse, error)
	// UserDelete deletes a user and its API tokens.
	UserDelete(ctx context.Context, username string) error
	// UserCreate creates a user that does not exist yet with a password
	// and role (core.ErrConflict for an existing one).
	UserCreate(ctx context.Context, username, password string, role core.Role) error

	// TaskLogKey finds the log of try (0 = the current try) of a task
	// instance, and returns it with the instance.
	TaskLogKey(ctx context.Context, k core.TIKey, try int) (tasklog.Key, *core.TaskInstance, error)
	// CallbackLogKey finds the log of attempt (0 = the latest) of the
	// callback id, and returns it with the callback (nil when a remote
	// api-server could not say: its log route then decides).
	CallbackLogKey(ctx context.Context, id int64, attempt int) (tasklog.Key, *core.Callback, error)
	// LogRead reads key's log from offset (up to a chunk) and returns the
	// offset to continue from; a log not written yet reads empty.
	LogRead(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error)
}

// remoteAnnotation marks a command group whose commands reach the
// deployment through the REST API when one is configured (apiClient), and
// localAnnotation a command inside it that always runs here (dags test).
const (
	remoteAnnotation = "weir.remote"
	localAnnotation  = "weir.local"
)

// remoteGroup marks cmd as a group of remote-capable commands and gives it
// the --api-url flag.
func (a *app) remoteGroup(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[remoteAnnotation] = "true"
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return a.chooseTransport(cmd) }
	cmd.PersistentFlags().StringVar(&a.apiURL, "api-url", "",
		"reach this deployment's REST API instead of the local database (default $WEIR_API_URL with $WEIR_API_TOKEN, or the deployment weir login saved)")
	return cmd
}

// localOnly marks a command of a remote group that always runs on this
// machine (it runs the engine in-process).
func localOnly(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[localAnnotation] = "true"
	return cmd
}

// chooseTransport runs before every command of a remote group: unless the
// command is local-only, a configured API (apiClient) becomes its
// transport. A command that has none then refuses the local database
// (withStore) instead of acting on another deployment than the one logged
// in to.
func (a *app) chooseTransport(cmd *cobra.Command) error {
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[localAnnotation] == "true" {
			return nil
		}
	}
	c, err := a.apiClient()
	if err != nil {
		return err
	}
	a.remote, a.remoteCmd = c, cmd
	return nil
}

// withBackend runs fn with the backend cmd uses: the REST API when one is
// configured (weir login, --api-url, $WEIR_API_URL with $WEIR_API_TOKEN),
// else the local database.
func (a *app) withBackend(cmd *cobra.Command, fn func(backend) error) error {
	if a.remote != nil {
		return fn(&restBackend{c: a.remote})
	}
	return a.withService(cmd.Context(), func(cfg *config.Config, svc *service.Service) error {
		return fn(&localBackend{cfg: cfg, svc: svc, actor: a.cliActor()})
	})
}

// notRemote is the error of a command that has no remote transport, run
// where an API is configured: exit ExitUsage, as a command line this CLI
// cannot carry out, so a ported script stops there.
func notRemote(cmd *cobra.Command) error {
	return &taskcli.ExitError{Code: ExitUsage, Err: fmt.Errorf("`%s` has no remote form: it works only on the local database, and this CLI is set to reach a deployment's "+
		"REST API (weir login, --api-url or $WEIR_API_URL with $WEIR_API_TOKEN): run it where the database is "+
		"configured, after `weir logout` (docs/remote.md)", cmd.CommandPath())}
}
