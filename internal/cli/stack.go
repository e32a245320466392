package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/apiserver"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/buildid"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/dagprocessor"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/job"
	"github.com/weirflow/weir/internal/logstore"
	"github.com/weirflow/weir/internal/metrics"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/scheduler"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/tasklog"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/triggerer"
	"github.com/weirflow/weir/internal/ui"
	"github.com/weirflow/weir/internal/worker"
)

// runner is a role's main loop: it runs until ctx is done.
type runner interface {
	Start(ctx context.Context) error
}

// newAPIServer builds the api-server role (REST API, Execution API and UI).
func newAPIServer(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger) (*apiserver.Server, error) {
	return buildAPIServer(cfg, st, opts, logger, true)
}

// newExecutionServer builds an api-server that serves only the Execution
// API, for a process whose own worker is its only client (`dags test`):
// building the REST API and parsing the UI's templates was a fifth of a
// one-task test's CPU.
func newExecutionServer(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger) (*apiserver.Server, error) {
	return buildAPIServer(cfg, st, opts, logger, false)
}

func buildAPIServer(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger, public bool) (*apiserver.Server, error) {
	tok, err := tokensFor(cfg)
	if err != nil {
		return nil, err
	}
	sc := serviceConfig(cfg, st, logger, opts)
	var why string
	sc.GroupTryEnds, why = service.GroupTryEnds(cfg.Database.GroupTryEnds, st.Dialect(), func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return st.RoundTrip(ctx, 5)
	})
	level := slog.LevelInfo // a choice on PostgreSQL: say it
	if st.Dialect() == "sqlite" {
		level = slog.LevelDebug
	}
	logger.Log(context.Background(), level, "concurrent try ends share a transaction (group commit)", "group", sc.GroupTryEnds, "because", why)
	svc := service.New(sc)
	logs, _, err := taskLogs(cfg, st)
	if err != nil {
		return nil, err
	}
	state := newStateService(cfg, st, opts.triggerTypes).Observe(opts.metrics.ObserveStateOp)
	exec := execapi.NewHandler(execapi.Deps{Store: st, Tokens: tok, LogFolder: cfg.Logging.BaseLogFolder, Logs: logs, Logger: logger,
		State: state, Service: svc, OnTryFinished: opts.metrics.ObserveTryFinished, Traces: tryTracer(opts),
		Config: execapi.Config{AllowAnyConnection: cfg.Core.AllowAnyConnection, OnlyDagRunID: opts.onlyRunID,
			ClaimRecheck: claimRecheck(cfg, st)}})
	srv := &apiserver.Server{
		Addr: net.JoinHostPort(cfg.API.Host, strconv.Itoa(cfg.API.Port)), Store: st, Logger: logger, Exec: exec,
		TLSCertFile: cfg.API.TLSCertFile, TLSKeyFile: cfg.API.TLSKeyFile, Metrics: opts.metrics,
		HeartbeatInterval: apiServerBeat(cfg), Version: buildVersion(),
	}
	if public {
		if srv.API, srv.UI, err = publicHandlers(cfg, st, svc, logs, state, logger); err != nil {
			return nil, err
		}
	}
	if _, err := srv.Listen(); err != nil {
		return nil, err
	}
	return srv, nil
}

// publicHandlers builds the REST API and the UI of an api-server.
func publicHandlers(cfg *config.Config, st store.Store, svc *service.Service, logs tasklog.Logs, state *statestore.Service, logger *slog.Logger) (http.Handler, http.Handler, error) {
	warnUndecryptable(svc, cfg, logger)
	keys, err := sessionKeys(cfg)
	if err != nil {
		return nil, nil, err
	}
	key, previous := keys[0], keys[1:]
	proxies, err := auth.ParseTrustedProxies(cfg.API.TrustedProxies)
	if err != nil {
		return nil, nil, fmt.Errorf("[api] trusted_proxies: %w", err)
	}
	throttle := auth.NewLoginThrottle(auth.ThrottleConfig{}, nil) // one count for the REST API and the UI
	rest, err := api.NewHandler(api.Config{
		Store: st, Logger: logger, SecretKey: key, PreviousSecretKeys: previous, LogFolder: cfg.Logging.BaseLogFolder, Logs: logs, DagsFolder: cfg.Core.DagsFolder, Version: version, GitVersion: commit(),
		State: state, Service: svc, LoginThrottle: throttle, SecureCookie: cfg.API.SecureCookie || cfg.API.TLSCertFile != "",
		TrustedProxies: proxies,
	})
	if err != nil {
		return nil, nil, err
	}
	web, err := ui.New(ui.Config{Store: st, Service: svc, State: state, LogFolder: cfg.Logging.BaseLogFolder, Logs: logs,
		DagsFolder: cfg.Core.DagsFolder, SecretKey: key, PreviousSecretKeys: previous, LoginThrottle: throttle, Logger: logger,
		SecureCookie: cfg.API.SecureCookie, TrustedProxies: proxies, Settings: cfg.List()})
	if err != nil {
		return nil, nil, err
	}
	return rest, web, nil
}

// taskLogs is where the api-server keeps and every reader finds task
// logs, as [logging] log_store and remote_base_log_folder say, and the
// remote store the scheduler uploads ended tries' logs to (nil = none).
func taskLogs(cfg *config.Config, st store.Store) (tasklog.Logs, *logstore.Remote, error) {
	return logstore.Open(logstore.Options{Database: cfg.Logging.LogStore == config.LogStoreDatabase,
		Folder: cfg.Logging.BaseLogFolder, Remote: cfg.Logging.RemoteBaseLogFolder}, st, nil)
}

// logRetention is how long the scheduler keeps task logs kept in the
// database or uploaded: [logging] log_retention, or 0 (never pruned) with
// the folder store, whose files are the operator's to rotate.
func logRetention(cfg *config.Config) time.Duration {
	if cfg.Logging.LogStore != config.LogStoreDatabase {
		return 0
	}
	return cfg.Logging.LogRetention.D()
}

// logPruneBatch is how many logs one batch of the database-kept logs'
// prune looks at (job.Walk runs up to job.WalkBatches of them a minute).
const logPruneBatch = 500

// logChunkWalk prunes the database-kept logs a batch at a time. Its walk
// starts at a random DAG id's first character (every key begins
// "dag_id="), not at the first key, so that schedulers restarted more often
// than one walk takes still reach every log over their lives.
func logChunkWalk(st store.Store) *job.Walk {
	const idChars = "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
	start := "dag_id=" + string(idChars[rand.IntN(len(idChars))]) //nolint:gosec // a starting point, not a secret
	return &job.Walk{After: start, Batch: func(ctx context.Context, before time.Time, after string) (int64, string, error) {
		res, err := st.TaskLogPrune(ctx, &store.TaskLogPruneParams{Before: before, After: after, Limit: logPruneBatch})
		return res.Chunks, res.Next, err
	}}
}

// claimRecheck is how often a waiting claim looks again unnotified: on
// SQLite, whose notifications stay in their process, every [scheduler]
// poll_interval (the scheduler's own fallback), so that work another
// process queued in the file is found; never on PostgreSQL, whose
// notifications reach every process.
func claimRecheck(cfg *config.Config, st store.Store) time.Duration {
	if st.Dialect() != "sqlite" {
		return 0
	}
	return cfg.Scheduler.PollInterval.D()
}

// apiServerBeat is how often an api-server writes its job row: half the
// workers' heartbeat interval (at most job.DefaultInterval), so that the
// scheduler judges a worker's silence against a recent sign that an
// api-server was up to hear it (docs/state-machines.md#dead-workers).
func apiServerBeat(cfg *config.Config) time.Duration {
	return min(cfg.Workers.HeartbeatInterval.D()/2, job.DefaultInterval)
}

// newScheduler builds the scheduler role: the scheduling loop and the DAG
// processor that keeps the database in step with the DAG folder.
func newScheduler(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger) []runner {
	return []runner{
		newSchedulerLoop(cfg, st, opts, logger),
		&job.Heartbeat{Store: st, Role: job.SchedulerRole, Interval: cfg.Scheduler.PollInterval.D(), Logger: logger, Version: buildVersion()},
		newProcessor(cfg, st, opts, logger),
		// The DAG processor runs in the scheduler's process; its own row
		// lists it in the health listing as a role of its own.
		&job.Heartbeat{Store: st, Role: job.DagProcessorRole, Interval: cfg.Scheduler.DagDirListInterval.D(), Logger: logger, Version: buildVersion()},
		&job.Pruner{What: "job rows of stopped processes", Prune: st.JobPrune, Retention: cfg.Core.JobRetention.D(), Logger: logger},
		&job.Pruner{What: "task logs kept in the database", Prune: logChunkWalk(st).Prune, Retention: logRetention(cfg), Logger: logger},
		logUploader{cfg: cfg, st: st, logger: logger},
		newStateCleaner(cfg, st, logger),
	}
}

// logUploader is the scheduler's logstore.Uploader when [logging]
// remote_base_log_folder is set: it opens the remote store at start.
type logUploader struct {
	cfg    *config.Config
	st     store.Store
	logger *slog.Logger
}

// Start runs the uploader until ctx is done; without a remote store it
// returns at once.
func (l logUploader) Start(ctx context.Context) error {
	_, remote, err := taskLogs(l.cfg, l.st)
	if err != nil || remote == nil {
		return err
	}
	return (&logstore.Uploader{Remote: remote, Retention: logRetention(l.cfg), Logger: l.logger}).Start(ctx)
}

// newSchedulerLoop builds the scheduling loop; opts.onlyDagID confines it
// to one DAG's existing runs (weir dags test).
func newSchedulerLoop(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger) *scheduler.Scheduler {
	opts.metrics.AddScheduler()
	return &scheduler.Scheduler{Store: st, Clock: core.SystemClock{}, Logger: logger, Service: newService(cfg, st, logger, opts),
		OnLoop: opts.metrics.ObserveSchedulerLoop, OnPass: opts.metrics.ObserveSchedulerPass, OnRunFinished: runTracer(opts),
		OnTryFailedOver: failoverTracer(opts),
		Config: scheduler.Config{
			PollInterval:               cfg.Scheduler.PollInterval.D(),
			HeartbeatTimeout:           cfg.Scheduler.TaskInstanceHeartbeatTimeout.D(),
			WorkerCheckInterval:        cfg.Workers.HeartbeatInterval.D() / 2,
			APIServerHeartbeatInterval: apiServerBeat(cfg),
			MaxRunsToCreatePerLoop:     cfg.Scheduler.MaxDagrunsToCreatePerLoop,
			MaxMapLength:               cfg.Scheduler.MaxMapLength,
			CallbackMaxAttempts:        cfg.Callbacks.MaxAttempts,
			OnlyDagID:                  opts.onlyDagID,
		}}
}

// newProcessor builds the DAG processor for the configured DAG folder and
// the program's Go SDK DAGs.
func newProcessor(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger) *dagprocessor.Processor {
	return &dagprocessor.Processor{
		Store: st, Dir: cfg.Core.DagsFolder, Extra: opts.DAGs, Clock: core.SystemClock{}, Logger: logger,
		Interval: cfg.Scheduler.DagDirListInterval.D(), PauseNew: cfg.Core.DagsArePausedAtCreation,
		DefaultTimezone: cfg.Core.DefaultTimezone, CronTriggers: !cfg.Scheduler.CreateCronDataIntervals,
		Loader: dagfile.NewLoader(int64(cfg.DagProcessor.MaxFileBytes), cfg.DagProcessor.DagFileProcessorTimeout.D()).
			WithOptions(dagfile.Options{CheckTrigger: opts.triggerTypes.CheckLoaded, CheckWatcher: opts.triggerTypes.CheckWatcher,
				StreamTypes: opts.triggerTypes.StreamTypes()}),
		Parser: dagParser(opts.triggerTypes),
	}
}

// dagParser names what parses DAG files in this program
// (dagprocessor.Processor.Parser): its build, the trigger types the
// loader checks triggers against and the time zone database it reads;
// "" when the build ID cannot be read.
func dagParser(types *trigger.Registry) string {
	id := buildid.Self()
	if id == "" {
		return ""
	}
	h := sha256.New()
	for _, t := range types.Types() {
		fmt.Fprintf(h, "%s %d\n", t.Name, t.Uses)
	}
	fmt.Fprintln(h, dagfile.ZoneData())
	return id + " " + hex.EncodeToString(h.Sum(nil)[:8])
}

// newWorker builds a worker that reaches the api-server at apiURL with a
// worker credential (minted from the local signing key when token is "").
func newWorker(cfg *config.Config, apiURL, name, token string, opts *Options, logger *slog.Logger, sharedLogs bool) (*worker.Worker, error) {
	if name == "" && token != "" {
		name = tokenSubject(token)
	}
	if name == "" {
		host, _ := os.Hostname()
		name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if token == "" {
		tok, err := tokensFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("worker credential: pass --token (from `weir tokens create --worker NAME`) or run where [api_auth] jwt_secret or jwt_secret_file holds the api-servers' keys: %w", err)
		}
		if token, err = tok.IssueWorker(name, 0); err != nil {
			return nil, err
		}
	}
	if err := stateref.Check(cfg.Workers.StateBackend, opts.StateBackends); err != nil {
		return nil, fmt.Errorf("[state_store] backend / [workers] state_backend: %w", err)
	}
	if ca := cfg.Workers.TLSCAFile; ca != "" {
		if _, err := execclient.LoadCA(ca); err != nil {
			return nil, fmt.Errorf("[workers] tls_ca_file: %w", err)
		}
	}
	w := &worker.Worker{
		Client:             execclient.NewClient(executionURLs(apiURL), token, execclient.ClientOptions{CAFile: cfg.Workers.TLSCAFile}),
		Queues:             cfg.Workers.Queues,
		Concurrency:        cfg.Workers.Concurrency,
		WorkerID:           name,
		Registry:           opts.Functions,
		Triggers:           opts.triggerTypes,
		Connections:        configConnections(cfg.Connections),
		HeartbeatInterval:  cfg.Workers.HeartbeatInterval.D(),
		ShutdownGrace:      cfg.Workers.ShutdownGracePeriod.D(),
		NoSpareShells:      !cfg.Workers.SpareShells,
		StateBackend:       cfg.Workers.StateBackend,
		StateBackends:      opts.StateBackends,
		StateSweepInterval: cfg.Workers.StateSweepInterval.D(),
		CallbackSlots:      cfg.Callbacks.MaxActive,
		CallbackTimeout:    cfg.Callbacks.Timeout.D(),
		RunDir:             filepath.Join(cfg.Home, "run"),
		Clock:              core.SystemClock{},
		Logger:             logger,
		Version:            buildVersion(),
	}
	if sharedLogs {
		w.LogFolder = cfg.Logging.BaseLogFolder
	}
	opts.metrics.AddWorker(w.Slots)
	return w, nil
}

// writesLogFolder says whether a worker beside its api-server, in the same
// process (standalone's, a test's), writes the log folder itself: with
// log_store = folder. With database it ships its logs as a remote worker
// does, and no file or folder is made a try.
func writesLogFolder(cfg *config.Config) bool {
	return cfg.Logging.LogStore == config.LogStoreFolder
}

// executionURLs turns api-server base URLs (comma-separated) into their
// Execution API URLs, comma-separated as execclient.NewClient takes them.
func executionURLs(apiURLs string) string {
	var out []string
	for u := range strings.SplitSeq(apiURLs, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			out = append(out, u+"/execution")
		}
	}
	return strings.Join(out, ",")
}

// runServices runs the services until ctx is done. Workers stop first (their
// running tasks get the grace period and report back through the api-server),
// then everything else. The first service error stops them all.
func runServices(ctx context.Context, workers []runner, others []runner) error {
	infraCtx, stopInfra := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInfra()
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()

	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		if err == nil || errors.Is(err, context.Canceled) {
			return
		}
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		stopWork() // a failed role brings the node down
	}
	var infra, work sync.WaitGroup
	for _, s := range others {
		infra.Go(func() { fail(s.Start(infraCtx)) })
	}
	for _, s := range workers {
		work.Go(func() { fail(s.Start(workCtx)) })
	}
	go func() { // an infra failure also stops the workers
		<-infraCtx.Done()
		stopWork()
	}()
	select {
	case <-workCtx.Done():
	case <-ctx.Done():
	}
	work.Wait()
	stopInfra()
	infra.Wait()
	return errors.Join(errs...)
}

// serverSetup loads the configuration and opens the database for a server role, applying migrations when
// asked (standalone) and refusing a stale schema otherwise.
func (a *app) serverSetup(ctx context.Context, migrate bool) (*config.Config, *sqlstore.Store, *slog.Logger, error) {
	if migrate { // a command that may create the database may create the home too
		home, err := a.homeDir()
		if err != nil {
			return nil, nil, nil, err
		}
		if err := config.InitHome(home, a.opts.Environ, newLogger(a.opts.Stderr, "info")); err != nil {
			return nil, nil, nil, err
		}
	}
	cfg, err := a.config()
	if err != nil {
		return nil, nil, nil, err
	}
	logger := newLogger(a.opts.Stderr, cfg.Logging.Level)
	cfg.TightenSecrets(logger)
	st, err := openStore(ctx, cfg, migrate, true, a.opts.readConns, logger)
	// A role started while the database restarts waits for it (a bounded
	// while) instead of exiting: deployments start roles and the database
	// in any order.
	for wait, since := 500*time.Millisecond, time.Now(); err != nil && sqlstore.Unreachable(err) && time.Since(since) < startupDBWait; wait = min(2*wait, 5*time.Second) {
		logger.Warn("the database is unreachable; retrying", "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, nil, nil, err
		case <-time.After(wait):
		}
		st, err = openStore(ctx, cfg, migrate, true, a.opts.readConns, logger)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	a.opts.metrics.AddDB("weir", st.DB())
	a.opts.metrics.AddStore(st)
	st.ObserveAssetEvents(a.opts.metrics.AssetEventCreated)
	return cfg, st, logger, nil
}

// warnUndecryptable logs the stored connections and variables this
// api-server cannot decrypt: its key file is not the one that sealed them.
func warnUndecryptable(svc *service.Service, cfg *config.Config, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conns, vars, err := svc.UndecryptableSecrets(ctx)
	switch {
	case err != nil:
		logger.Warn("check that stored connections and variables decrypt", "err", err)
	case conns+vars > 0:
		logger.Warn("stored connections or variables do not decrypt with this node's key file: give every node the same "+
			"[core] secrets_key_file (copy it from the node that wrote them; docs/secrets.md); tasks that need them fail until then",
			"connections", conns, "variables", vars, "key_file", cfg.Core.SecretsKeyFile)
	}
}

// withMetrics adds the [metrics] listen server to a process's runners when
// the option is set, and the trace exporter's flush at shutdown when the
// process exports traces.
func (a *app) withMetrics(cfg *config.Config, logger *slog.Logger, runners []runner) []runner {
	if a.opts.traces != nil {
		runners = append(runners, a.opts.traces)
	}
	if cfg.Metrics.Listen == "" {
		return runners
	}
	return append(runners, &metrics.Server{Addr: cfg.Metrics.Listen, Metrics: a.opts.metrics, Logger: logger})
}

// startupDBWait is how long a starting role waits for an unreachable
// database before it gives up.
const startupDBWait = 2 * time.Minute

func newLogger(w interface{ Write([]byte) (int, error) }, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by config
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// configConnections serves conn_id lookups from [connections] and
// WEIR_CONN_<ID> (lower-cased ids).
type configConnections map[string]string

func (c configConnections) ConnectionURI(_ context.Context, id string) (string, error) {
	if uri, ok := c[id]; ok {
		return uri, nil
	}
	return "", fmt.Errorf("connection %q is not defined (add it to [connections] in weir.toml or set WEIR_CONN_%s): %w",
		id, strings.ToUpper(id), core.ErrNotFound)
}

// tokenSubject reads the subject of a worker credential without verifying
// it (the api-server verifies); "" when it is not a JWT.
func tokenSubject(token string) string {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &c); err != nil {
		return ""
	}
	return c.Subject
}

// newTriggerer builds the triggerer role. Its triggers read connections
// from [connections] and then the database, and write their lines to the
// waiting tries' logs in logs (where the tries' own lines go).
func newTriggerer(cfg *config.Config, st store.Store, opts *Options, logger *slog.Logger, logs tasklog.Logs) *triggerer.Triggerer {
	return &triggerer.Triggerer{
		Service: newService(cfg, st, logger, opts), Store: st, Registry: opts.triggerTypes,
		Connections: operator.Chain(configConnections(cfg.Connections), storeConnections{st}),
		Clock:       core.SystemClock{}, Logger: logger, Logs: logs, Version: buildVersion(), Observer: opts.metrics,
		Config: triggerer.Config{Capacity: cfg.Triggerer.Capacity, HeartbeatInterval: cfg.Triggerer.HeartbeatInterval.D(),
			StreamRetention: cfg.Triggerer.StreamRetention.D(), OnlyDagRunID: opts.onlyRunID},
	}
}

// storeConnections serves conn_id lookups from the database's connections.
type storeConnections struct{ st store.Store }

func (c storeConnections) ConnectionURI(ctx context.Context, id string) (string, error) {
	conn, err := c.st.ConnectionGet(ctx, id)
	if err != nil {
		return "", err
	}
	return conn.URI, nil
}
