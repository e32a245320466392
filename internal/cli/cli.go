// Package cli is Weir's command line: every role (standalone, api-server,
// scheduler, worker), the admin commands (db, dags, runs, users, tokens,
// config), and mounts the in-task commands of package taskcli (task-state,
// asset-state, xcom, assets add-to-alias). It is the only package that knows
// the concrete types behind every interface, and wires them together.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/apiclient"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/metrics"
	"github.com/weirflow/weir/internal/operator"
	_ "github.com/weirflow/weir/internal/prefault" // every weir process maps its code at once
	"github.com/weirflow/weir/internal/stateref"
	"github.com/weirflow/weir/internal/taskcli"
	"github.com/weirflow/weir/internal/tracing"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// Options carries what a program built on Weir adds to the CLI: the Go SDK's
// DAGs and task functions. The zero value is the plain weir binary.
type Options struct {
	DAGs      []core.DAG
	Functions *operator.Registry
	// Triggers are the program's own trigger types, next to the built-in
	// ones (weir.RegisterTrigger).
	Triggers []trigger.Type
	// StateBackends are the program's custom state backends by name
	// (weir.WithStateBackend), which [state_store] backend or [workers]
	// state_backend may name.
	StateBackends stateref.Registry
	Stdin         io.Reader // answers to questions (weir tasks clear); nil = os.Stdin
	Stdout        io.Writer
	Stderr        io.Writer
	Environ       []string

	triggerTypes *trigger.Registry // built-in + Triggers
	metrics      *metrics.Metrics  // this process's Prometheus series
	traces       *tracing.Tracer   // this process's trace exporter; nil = none (traces.go)
	onlyDagID    string            // the one DAG this process runs (dags test): its scheduler's and service's
	onlyRunID    int64             // the one run whose work its api-server and triggerer claim (dags test)
	readConns    int               // the SQLite read pool's size; 0 = sqlite.Options' default (dags test: 1)
}

// Run executes the command line and returns the process exit code.
func Run(ctx context.Context, args []string, opts Options) int {
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Functions == nil {
		opts.Functions = operator.NewRegistry()
	}
	opts.triggerTypes = builtin.Registry()
	opts.metrics = metrics.New()
	for _, t := range opts.Triggers {
		if err := opts.triggerTypes.Register(t); err != nil {
			fmt.Fprintf(opts.Stderr, "Error: %v\n", err)
			return 1
		}
	}
	root := newRootFor(&opts, args)
	root.SetArgs(args)
	if opts.Stdin != nil {
		root.SetIn(opts.Stdin)
	}
	root.SetOut(opts.Stdout)
	root.SetErr(opts.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(opts.Stderr, "Error:", err)
	// A command that documents an exit code (the in-task commands, `weir
	// dags test`) returns a *taskcli.ExitError.
	var ee *taskcli.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// app is the state shared by commands: options and the --home flag.
type app struct {
	opts *Options
	home string
	dags string // --dags: overrides [core] dags_folder
	// apiURL is --api-url: the deployment the admin commands reach through
	// its REST API (remote.go).
	apiURL string
	// remote is the REST API the running command reaches (nil: the local
	// database), chosen for remoteCmd by chooseTransport.
	remote    *apiclient.Client
	remoteCmd *cobra.Command
}

func newRoot(opts *Options) *cobra.Command { return newRootFor(opts, nil) }

// newRootFor builds the command tree for the command line args: only the
// root command args name, when it names one (building every command is
// ~1 ms of each start, docs/performance-history.md); all of them otherwise (no
// command, help, completion, a misspelt name), as newRoot does.
func newRootFor(opts *Options, args []string) *cobra.Command {
	if opts.triggerTypes == nil {
		opts.triggerTypes = builtin.Registry()
	}
	if opts.metrics == nil {
		opts.metrics = metrics.New()
	}
	a := &app{opts: opts}
	root := &cobra.Command{
		Use:           "weir",
		Short:         "Weir: a workflow orchestrator that remembers",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&a.home, "home", "", "Weir home folder (default $WEIR_HOME or ~/weir)")
	root.PersistentFlags().StringVar(&a.dags, "dags", "", "folder of DAG files (default [core] dags_folder, $WEIR_HOME/dags)")
	cmds := a.commands()
	if build, ok := cmds[commandName(args)]; ok {
		root.AddCommand(build())
	} else {
		for _, name := range slices.Sorted(maps.Keys(cmds)) {
			root.AddCommand(cmds[name]())
		}
	}
	strictGroups(root)
	usageErrors(root)
	return root
}

// commands builds each of the root's commands, by name.
func (a *app) commands() map[string]func() *cobra.Command {
	remote := func(build func() *cobra.Command) func() *cobra.Command {
		return func() *cobra.Command { return a.remoteGroup(build()) }
	}
	return map[string]func() *cobra.Command{
		"login": a.loginCmd, "logout": a.logoutCmd,
		"standalone": a.standaloneCmd, "api-server": a.apiServerCmd, "scheduler": a.schedulerCmd,
		"triggerer": a.triggererCmd, "worker": a.workerCmd,
		"db": a.dbCmd, "config": a.configCmd, "dags": remote(a.dagsCmd), "tasks": remote(a.tasksCmd), "runs": remote(a.runsCmd),
		"users": remote(a.usersCmd), "tokens": a.tokensCmd, "connections": remote(a.connectionsCmd),
		"variables": remote(a.variablesCmd), "pools": remote(a.poolsCmd), "xcom": taskcli.XComCmd, "version": a.versionCmd,
		"task-state":  func() *cobra.Command { return taskcli.TaskStateCmd(a.opts.StateBackends) },
		"asset-state": func() *cobra.Command { return taskcli.AssetStateCmd(a.opts.StateBackends) },
		"defer":       func() *cobra.Command { return taskcli.DeferCmd(a.opts.triggerTypes) },
		"stream":      remote(a.streamCmd), "state-store": remote(a.stateStoreCmd),
		"assets": remote(a.assetsCmd), "audit": a.auditCmd, "triggers": a.triggersCmd, "jobs": a.jobsCmd, "keys": a.keysCmd,
		"backfills": remote(a.backfillsCmd), "health": remote(a.healthCmd),
	}
}

// commandName is the root command a command line names: its first
// argument after the root's own flags (--home, --dags, with their values).
// Any other flag before it ("" = none: the whole tree is built) is left to
// cobra, which may read the next argument as its value.
func commandName(args []string) string {
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--home" || arg == "--dags":
			i++ // its value
		case strings.HasPrefix(arg, "--home=") || strings.HasPrefix(arg, "--dags="):
		case strings.HasPrefix(arg, "-"):
			return ""
		default:
			return arg
		}
	}
	return ""
}

// homeDir resolves --home, then $WEIR_HOME, then ~/weir.
func (a *app) homeDir() (string, error) {
	home := a.home
	if home == "" {
		home = a.getenv("WEIR_HOME")
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find home folder (set --home or WEIR_HOME): %w", err)
		}
		home = filepath.Join(h, "weir")
	}
	return filepath.Abs(home)
}

func (a *app) getenv(name string) string {
	prefix := name + "="
	for _, kv := range a.opts.Environ {
		if len(kv) > len(prefix) && kv[:len(prefix)] == prefix {
			return kv[len(prefix):]
		}
	}
	return ""
}

// config loads the configuration of the home folder.
func (a *app) config() (*config.Config, error) {
	home, err := a.homeDir()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(home, a.opts.Environ)
	if err != nil || a.dags == "" {
		return cfg, err
	}
	abs, err := filepath.Abs(a.dags)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--dags %s: not a folder", a.dags)
	}
	cfg.Core.DagsFolder = abs
	return cfg, nil
}
