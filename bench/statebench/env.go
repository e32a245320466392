package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/apiserver"
	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execapi"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/statestore"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/postgres"
	"github.com/weirflow/weir/internal/store/sqlite"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

// benchDag is the DAG whose task instances the writers run as.
const benchDag = "bench_state"

// benchAsset is the outlet of every task of benchDag (the emit op).
var benchAsset = core.Asset{Name: "bench_batches", URI: "file:///tmp/bench_batches"}

// env is one fresh home and database with an api-server child serving it.
type env struct {
	o       *options
	home    string
	environ []string
	st      *sqlstore.Store // the benchmark's own connection (seeding, cleanup)
	vid     int64           // DAG version of benchDag
	cmd     *exec.Cmd
	api     string // http://127.0.0.1:PORT
	worker  *execclient.Client
	drops   []func()
}

// newEnv creates a home, a fresh database (PostgreSQL: a new database on
// the server of -dsn), migrates it with `weir db migrate` and syncs
// benchDag with tasks tasks.
func newEnv(ctx context.Context, o *options, name string, tasks int) (*env, error) {
	e := &env{o: o}
	home, err := os.MkdirTemp("", "statebench-")
	if err != nil {
		return nil, err
	}
	e.home = home
	e.drops = append(e.drops, func() { _ = os.RemoveAll(home) })
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	e.api = fmt.Sprintf("http://127.0.0.1:%d", port)
	conn := "sqlite:///" + filepath.Join(home, "weir.db")
	if o.engine == "postgres" {
		dsn, drop, err := freshDatabase(o.dsn, fmt.Sprintf("statebench_%d_%s", os.Getpid(), name))
		if err != nil {
			return nil, err
		}
		e.drops = append(e.drops, drop)
		conn = dsn
	}
	e.environ = append(os.Environ(), "WEIR__DATABASE__CONN="+conn, fmt.Sprintf("WEIR__API__PORT=%d", port),
		"WEIR__LOGGING__LEVEL=warn")
	var out bytes.Buffer
	if code := cli.Run(ctx, []string{"db", "migrate", "--home", home}, cli.Options{Environ: e.environ, Stdout: &out, Stderr: &out}); code != 0 {
		return nil, fmt.Errorf("weir db migrate: exit %d: %s", code, out.String())
	}
	if o.engine == "postgres" {
		e.st, err = postgres.Open(ctx, conn, postgres.Options{})
	} else {
		e.st, err = sqlite.Open(ctx, strings.TrimPrefix(conn, "sqlite:///"), sqlite.Options{})
	}
	if err != nil {
		return nil, err
	}
	// Every task declares the asset the emit op emits for; a consumer DAG
	// is scheduled on it, so each emission also queues a consumer.
	dag := core.DAG{DagID: benchDag, FileLoc: "go:statebench", Assets: []core.Asset{benchAsset}}
	for i := range tasks {
		dag.Tasks = append(dag.Tasks, core.Task{TaskID: fmt.Sprintf("t%03d", i), Operator: "noop",
			Outlets: []core.AssetRef{{Name: benchAsset.Name}}})
	}
	cons := core.DAG{DagID: benchDag + "_consumer", FileLoc: "go:statebench", Assets: []core.Asset{benchAsset},
		AssetSchedule: []core.AssetRef{{Name: benchAsset.Name}}, Tasks: []core.Task{{TaskID: "use", Operator: "noop"}}}
	e.vid, _, err = e.st.DagSync(ctx, &store.DagSyncParams{Spec: dag, Hash: fmt.Sprintf("statebench-%d", tasks), Now: time.Now()})
	if err == nil {
		_, _, err = e.st.DagSync(ctx, &store.DagSyncParams{Spec: cons, Hash: "statebench-consumer", Now: time.Now()})
	}
	for _, d := range []*core.DAG{&dag, &cons} {
		if err == nil {
			err = e.st.AssetSync(ctx, &store.AssetSyncParams{Spec: d, Now: time.Now()})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sync dag: %w", err)
	}
	return e, nil
}

// createRun creates a running run of benchDag with the first n tasks
// queued (n = 0: a run without task instances).
func (e *env) createRun(ctx context.Context, runID string, n int) error {
	var tis []store.NewTaskInstance
	for i := range n {
		tis = append(tis, store.NewTaskInstance{ID: uuid.NewString(), TaskID: fmt.Sprintf("t%03d", i), MapIndex: core.NoMapIndex,
			MaxTries: 1, Queue: "default", Operator: "noop", State: core.TIQueued, PriorityWeight: 1})
	}
	_, err := e.st.DagRunCreate(ctx, &store.DagRunCreateParams{DagID: benchDag, RunID: runID, RunType: core.RunManual,
		State: core.RunRunning, DagVersionID: e.vid, Now: time.Now(), TaskInstances: tis})
	if err != nil {
		return fmt.Errorf("create run %s: %w", runID, err)
	}
	return nil
}

// start runs `weir api-server` (this binary in serve mode) on the home and
// mints a worker credential with `weir tokens create --worker`. With
// -inprocess the Execution API runs in this process on the benchmark's own
// store instead, as in `weir standalone`, where the scheduler's periodic
// cleanup and the api-server share SQLite's one writer connection.
func (e *env) start(ctx context.Context) error {
	if e.o.inprocess {
		return e.startInProcess(ctx)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	e.cmd = exec.Command(self, "serve", "--home", e.home)
	e.cmd.Env = e.environ
	if e.o.cpuprofile != "" {
		e.cmd.Env = append(e.cmd.Env, "WEIR_BENCH_CPUPROFILE="+e.o.cpuprofile)
	}
	logf, err := os.Create(filepath.Join(e.home, "api-server.log"))
	if err != nil {
		return err
	}
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	if err := e.cmd.Start(); err != nil {
		return err
	}
	var out, errb bytes.Buffer
	if code := cli.Run(ctx, []string{"tokens", "create", "--worker", "statebench", "--home", e.home},
		cli.Options{Environ: e.environ, Stdout: &out, Stderr: &errb}); code != 0 {
		return fmt.Errorf("weir tokens create: exit %d: %s", code, errb.String())
	}
	e.worker = execclient.NewClient(e.api+"/execution", strings.TrimSpace(out.String()), execclient.ClientOptions{Retries: -1})
	return e.waitHealthy(logf.Name())
}

// startInProcess serves the Execution API from this process, built as the
// api-server role builds it, over the benchmark's store.
func (e *env) startInProcess(ctx context.Context) error {
	cfg, err := config.Load(e.home, e.environ)
	if err != nil {
		return err
	}
	key, err := config.Secret(cfg.APIAuth.JWTSecretFile, 64)
	if err != nil {
		return err
	}
	tok, err := auth.NewTokens(auth.Config{Key: []byte(key), ExecutionTTL: cfg.APIAuth.JWTExpirationTime.D()}, nil)
	if err != nil {
		return err
	}
	s := cfg.StateStore
	exec := execapi.NewHandler(execapi.Deps{Store: e.st, Tokens: tok, LogFolder: cfg.Logging.BaseLogFolder,
		State: statestore.New(e.st, core.SystemClock{}, statestore.Config{DefaultRetentionDays: s.DefaultRetentionDays,
			MaxValueBytes: s.MaxValueBytes, ClearOnSuccess: s.ClearOnSuccess, CleanupBatchSize: s.StateCleanupBatchSize})})
	srv := &apiserver.Server{Addr: strings.TrimPrefix(e.api, "http://"), API: http.NotFoundHandler(), Exec: exec,
		HeartbeatInterval: time.Hour}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Start(sctx) }()
	e.drops = append(e.drops, func() { cancel(); <-done })
	wtok, err := tok.IssueWorker("statebench", 0)
	if err != nil {
		return err
	}
	e.worker = execclient.NewClient(e.api+"/execution", wtok, execclient.ClientOptions{Retries: -1})
	return e.waitHealthy("(in process)")
}

func (e *env) waitHealthy(logName string) error {
	deadline := time.Now().Add(30 * time.Second)
	health := e.api + "/execution/health"
	for {
		resp, err := http.Get(health) //nolint:gosec,noctx // loopback URL built here
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("api-server did not become healthy (log: %s): %w", logName, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runTries claims n queued task instances through the Execution API and
// moves each to running (PATCH .../run), returning one client per try,
// authenticated with that try's own execution token and sharing the worker
// client's keep-alive connection pool, as a worker's tasks do.
func (e *env) runTries(ctx context.Context, n int) ([]*execclient.Client, error) {
	var out []*execclient.Client
	for len(out) < n {
		wls, err := e.worker.Claim(ctx, execclient.ClaimRequest{WorkerID: "statebench", Limit: min(32, n-len(out)), WaitSeconds: 5})
		if err != nil {
			return nil, fmt.Errorf("claim: %w", err)
		}
		if len(wls) == 0 {
			return nil, errors.New("claim returned nothing: fewer queued task instances than asked for")
		}
		for _, wl := range wls {
			c := e.worker.WithToken(wl.Token, execclient.TaskIdentity{TIID: wl.TI.ID})
			if _, err := c.Run(ctx, wl.TI.ID, execclient.RunRequest{}); err != nil {
				return nil, fmt.Errorf("run %s: %w", wl.TI.ID, err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// close stops the api-server and removes the home and database.
func (e *env) close() {
	if e.cmd != nil && e.cmd.Process != nil {
		_ = e.cmd.Process.Signal(syscall.SIGTERM)
		_ = e.cmd.Wait()
	}
	if e.st != nil {
		e.st.Close()
	}
	for i := len(e.drops) - 1; i >= 0; i-- {
		e.drops[i]()
	}
}

// freshDatabase creates an empty database on the server of dsn and returns
// its DSN and a function that drops it.
func freshDatabase(dsn, name string) (string, func(), error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", nil, err
	}
	ctx := context.Background()
	_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		db.Close()
		return "", nil, fmt.Errorf("parse dsn: %w", err)
	}
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		db.Close()
	}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverCPU is the CPU time (user and system) the api-server has used so
// far: the child's from /proc/PID/stat, or this whole process's with
// -inprocess (the clients' too). Zero when it cannot be read.
func (e *env) serverCPU() time.Duration {
	if e.cmd == nil || e.cmd.Process == nil {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which ends with the last ')'): state
	// is field 3, utime 14 and stime 15, in clock ticks (USER_HZ, 100 on Linux).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
