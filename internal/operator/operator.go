// Package operator runs one task try from its rendered arguments: bash
// (a subprocess in its own process group), http, sql (PostgreSQL or
// SQLite), noop, and go (Go functions registered by name in a Registry and
// run in-process). Operators write to the task log and return the try's
// return value; the worker pushes it as the return_value XCom and reports
// the state. The sql operator's database drivers are linked by the
// program (internal/cli), not here.
package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/taskproc"
	"github.com/weirflow/weir/internal/trigger"
)

// Operator names.
const (
	Bash = "bash"
	HTTP = "http"
	SQL  = "sql"
	Noop = "noop"
	Go   = "go"
)

// ErrSkipped makes a try end as skipped (Airflow's AirflowSkipException; the
// bash operator's exit code 99).
var ErrSkipped = errors.New("task skipped")

// ErrTimeout is the cause of a try's context when execution_timeout passes.
var ErrTimeout = errors.New("execution_timeout exceeded")

// NoRetry marks err as failing its try for good: the task instance fails
// whatever tries it has left (Airflow's AirflowFailException and
// AirflowSensorTimeout). IsNoRetry finds the mark.
func NoRetry(err error) error { return noRetryError{err} }

type noRetryError struct{ error }

func (e noRetryError) Unwrap() error { return e.error }

// IsNoRetry reports whether err, or an error it wraps, was marked by NoRetry.
func IsNoRetry(err error) bool { return errors.As(err, new(noRetryError)) }

// ConnectionLookup resolves a conn_id to its URI (postgres://user:pass@host/db,
// sqlite:///path, https://host/base).
type ConnectionLookup interface {
	ConnectionURI(ctx context.Context, connID string) (string, error)
}

// XCom is a try's access to cross-task values (an execclient.Client satisfies it).
type XCom interface {
	XComPush(ctx context.Context, key string, value any) error
	XComPull(ctx context.Context, taskID, key string, mapIndex int) (json.RawMessage, error)
}

// Request is one try to run.
type Request struct {
	TI      core.TaskInstance
	Task    core.Task      // the definition; Args below are its rendered args
	Args    map[string]any // rendered arguments (bash_command, sql, endpoint, ...)
	Params  map[string]any // DAG params overridden by the run's conf
	MapArgs map[string]any // a mapped instance's expanded arguments
	Env     []string       // KEY=value variables giving a subprocess API access (WEIR_*)
	Log     io.Writer      // the try's log; must be safe for concurrent use
	// Mask, when set, is told every secret the operator learns (connection
	// passwords) so that the log never shows it.
	Mask func(secret string)
	XCom XCom
	// State, when set, is the try's task and asset state (the worker
	// passes the worker-side backend's wrapper); nil = XCom's, when it
	// serves state.
	State State
	// Resume is set when a deferred try resumes (nil on its first step).
	Resume *Resume
	// Connections, when set, is consulted after the Runner's own lookup:
	// the worker passes the try's Execution API client, which reads
	// connections stored in the database.
	Connections ConnectionLookup
	// ExitTrap, when set, is a line a bash task's shell runs first, which
	// makes it leave its exit status in the worker's ledger as its last act
	// (a trap on EXIT), for the worker's next life should this one die
	// before learning it (taskproc.Outcome.ExitTrap).
	ExitTrap string
	// AssetEvents are the asset events that created the run (an
	// asset-triggered run's; nil otherwise).
	AssetEvents []core.AssetEvent
	// PartitionKey is the partition the run is for ("" = none).
	PartitionKey string
}

func (r *Request) mask(s string) {
	if r.Mask != nil && s != "" {
		r.Mask(s)
	}
}

func (r *Request) logf(format string, args ...any) {
	_, _ = fmt.Fprintf(r.Log, "[%s] "+format+"\n", append([]any{time.Now().UTC().Format(time.RFC3339)}, args...)...)
}

// Result is what a successful try produced.
type Result struct {
	// ReturnValue is the JSON of the return_value XCom; nil means none.
	ReturnValue json.RawMessage
}

// Runner runs tries. Its zero value runs bash and noop; set the fields for
// the rest.
type Runner struct {
	Registry    *Registry        // Go task functions
	Connections ConnectionLookup // conn_id → URI
	// PathDir is put first on a bash task's PATH (the directory of the
	// worker's own executable, so `weir xcom push` works inside).
	PathDir    string
	BaseEnv    []string      // the worker's environment; nil = os.Environ() (tasks get it less Weir's own secrets: TaskEnviron)
	HTTPClient *http.Client  // nil = a client with a 5 min timeout
	MaxSQLRows int           // rows kept as a SELECT's return value; 0 = 1000
	KillGrace  time.Duration // SIGTERM → SIGKILL of a cancelled bash task; 0 = 5 s
	// Triggers are the trigger types a Go task's Defer is checked against
	// (nil = not checked here; the server checks).
	Triggers *trigger.Registry
	// DeferDir is where bash tasks' `weir task defer` requests are written
	// (the worker's private directory); "" = the system temp directory.
	DeferDir string
	// Groups, when set, records each running bash task's process group so
	// that the worker's next life can kill it (taskproc.KillLeftovers).
	Groups *taskproc.Ledger
	// SpareShell keeps a bash shell started ahead of the next bash try
	// (ADR 0036); Close ends it.
	SpareShell bool

	spares spareShells
}

// Run runs one try. It returns ErrSkipped (wrapped) for a skipped try and
// any other error for a failed one; a cancelled ctx's cause is wrapped in
// the error.
func (r *Runner) Run(ctx context.Context, req *Request) (*Result, error) {
	if req.Log == nil {
		req.Log = io.Discard
	}
	switch req.Task.Operator {
	case Bash:
		return r.runBash(ctx, req)
	case HTTP:
		return r.runHTTP(ctx, req)
	case SQL:
		return r.runSQL(ctx, req)
	case Noop, "":
		return &Result{}, nil
	case Go:
		return r.runGo(ctx, req)
	case Sensor:
		return r.runSensor(ctx, req)
	}
	return nil, fmt.Errorf("task %s: unknown operator %q (want bash, http, sql, noop, go or sensor): %w", req.Task.TaskID, req.Task.Operator, core.ErrInvalid)
}

// stringArg returns a string argument; required ones must be non-empty.
func stringArg(args map[string]any, name string, required bool) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("argument %q is required: %w", name, core.ErrInvalid)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string, got %T: %w", name, v, core.ErrInvalid)
	}
	if required && strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("argument %q must not be empty: %w", name, core.ErrInvalid)
	}
	return s, nil
}

// boolArg returns a boolean argument (false when absent).
func boolArg(args map[string]any, name string) (bool, error) {
	switch v := args[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(v) {
		case "true", "yes", "1":
			return true, nil
		case "false", "no", "0", "":
			return false, nil
		}
	}
	return false, fmt.Errorf("argument %q must be true or false, got %v: %w", name, args[name], core.ErrInvalid)
}

// intArg returns an integer argument or def when absent.
func intArg(args map[string]any, name string, def int) (int, error) {
	switch v := args[name].(type) {
	case nil:
		return def, nil
	case int:
		return v, nil
	case float64:
		if v == float64(int(v)) {
			return int(v), nil
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("argument %q must be an integer, got %v: %w", name, args[name], core.ErrInvalid)
}

// stringMapArg returns a map argument with string values (headers, env).
func stringMapArg(args map[string]any, name string) (map[string]string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("argument %q must be a map, got %T: %w", name, v, core.ErrInvalid)
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k] = fmt.Sprint(x)
	}
	return out, nil
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (r *Runner) baseEnv() []string {
	if r.BaseEnv != nil {
		return TaskEnviron(r.BaseEnv)
	}
	return TaskEnviron(os.Environ())
}

// TaskEnviron is a worker's environment as its tasks (and callbacks) get
// it: without what configures or authenticates Weir itself. A task's
// code, and every viewer of a log it prints its environment to, must not
// hold the worker's credential (WEIR_WORKER_TOKEN: claiming any queue's
// tries as the worker), Weir's configuration overrides (WEIR__SECTION__KEY:
// the database's DSN, the signing keys) or connections given to the
// process (WEIR_CONN_<ID>: a task reaches the connections it declares,
// through the Execution API). Everything else is inherited, as in Airflow.
func TaskEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !weirSecret(name) {
			out = append(out, kv)
		}
	}
	return out
}

// weirSecret reports whether the environment variable name configures or
// authenticates Weir (TaskEnviron).
func weirSecret(name string) bool {
	return name == "WEIR_WORKER_TOKEN" || strings.HasPrefix(name, "WEIR__") || strings.HasPrefix(name, "WEIR_CONN_")
}

func (r *Runner) killGrace() time.Duration {
	if r.KillGrace > 0 {
		return r.KillGrace
	}
	return 5 * time.Second
}

// cancelled describes why ctx ended, for a try's error.
func cancelled(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return ctx.Err()
}
