package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
	"github.com/weirflow/weir/internal/taskproc"
)

func (a *app) standaloneCmd() *cobra.Command {
	var host string
	var port int
	cmd := &cobra.Command{
		Use:   "standalone",
		Short: "Run everything in one process (api-server, scheduler, triggerer, worker) on SQLite by default",
		Long: "Creates $WEIR_HOME (weir.toml, the SQLite database, an admin password and the signing keys, " +
			"0600) if needed, loads DAGs from --dags, and serves the API on --port until Ctrl-C. " +
			"--dags, --port and --host are written into $WEIR_HOME/weir.toml, so every later command " +
			"using this home (and the next standalone) works with the same deployment. " +
			"A standalone holds $WEIR_HOME/standalone.lock while it runs: a second one on the same home is refused.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := a.homeDir()
			if err != nil {
				return err
			}
			if err := config.InitHome(home, a.opts.Environ, newLogger(a.opts.Stderr, "info")); err != nil {
				return err
			}
			release, err := lockHome(home)
			if err != nil {
				return err
			}
			defer release()
			// What standalone is started with is what its home says: the
			// flags are written into weir.toml, so the next command reading
			// the home finds this deployment's DAG folder and port.
			if err := a.persistFlags(cmd, host, port); err != nil {
				return err
			}
			// Flags are the last layer: they override weir.toml and the environment.
			if cmd.Flags().Changed("port") {
				a.opts.Environ = append(a.opts.Environ, fmt.Sprintf("WEIR__API__PORT=%d", port))
			}
			if cmd.Flags().Changed("host") {
				a.opts.Environ = append(a.opts.Environ, "WEIR__API__HOST="+host)
			}
			ctx := cmd.Context()
			cfg, st, logger, err := a.serverSetup(ctx, true)
			if err != nil {
				return err
			}
			if err := startTracing(cfg, a.opts, logger); err != nil {
				st.Close()
				return err
			}
			defer st.Close()
			password, err := ensureAdmin(ctx, cfg, st)
			if err != nil {
				return err
			}
			srv, err := newAPIServer(cfg, st, a.opts, logger)
			if err != nil {
				return err
			}
			w, err := newWorker(cfg, srv.URL(), "standalone", "", a.opts, logger, writesLogFolder(cfg))
			if err != nil {
				return err
			}
			w.Client = w.Client.Via(srv.InProcess())
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Weir %s standalone\n  home:     %s\n  dags:     %s\n  database: %s\n  UI:       %s/\n  API:      %s/api/v2\n  login:    admin / %s\n  Press Ctrl-C to stop.\n",
				buildVersion(), cfg.Home, cfg.Core.DagsFolder, secrets.RedactURI(cfg.Database.Conn), srv.URL(), srv.URL(), password)
			logs, _, err := taskLogs(cfg, st)
			if err != nil {
				return err
			}
			others := append([]runner{srv, newTriggerer(cfg, st, a.opts, logger, logs)}, newScheduler(cfg, st, a.opts, logger)...)
			err = runServices(ctx, []runner{w}, a.withMetrics(cfg, logger, others))
			fmt.Fprintln(out, "Weir stopped.")
			return err
		},
	}
	cmd.Flags().IntVar(&port, "port", 8080, "API port (0 = any free port)")
	cmd.Flags().StringVar(&host, "host", "127.0.0.1", "address to listen on")
	return cmd
}

// persistFlags creates the home if needed and writes standalone's --dags,
// --port and --host into its weir.toml.
func (a *app) persistFlags(cmd *cobra.Command, host string, port int) error {
	var settings []config.Setting
	if a.dags != "" {
		abs, err := filepath.Abs(a.dags)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return fmt.Errorf("--dags %s: not a folder", a.dags)
		}
		settings = append(settings, config.Setting{Section: "core", Key: "dags_folder", Value: abs})
	}
	if cmd.Flags().Changed("port") {
		settings = append(settings, config.Setting{Section: "api", Key: "port", Value: strconv.Itoa(port)})
	}
	if cmd.Flags().Changed("host") {
		settings = append(settings, config.Setting{Section: "api", Key: "host", Value: host})
	}
	if len(settings) == 0 {
		return nil
	}
	home, err := a.homeDir()
	if err != nil {
		return err
	}
	if err := config.InitHome(home, a.opts.Environ, newLogger(a.opts.Stderr, "info")); err != nil {
		return err
	}
	if _, err := config.Load(home, a.opts.Environ); err != nil { // a broken home stays as it is
		return err
	}
	return config.Persist(home, settings)
}

// ensureAdmin creates the admin user on first start with a generated
// password kept in $WEIR_HOME/secrets/admin_password (0600), and returns the
// password to print (or a hint when the file is gone).
func ensureAdmin(ctx context.Context, cfg *config.Config, st store.Store) (string, error) {
	path := filepath.Join(cfg.Home, "secrets", "admin_password")
	if _, err := st.UserGet(ctx, "admin"); err == nil {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return "(password set earlier; reset with `weir users update --username admin --password NEW_PASSWORD`)", nil
		}
		return strings.TrimSpace(string(b)), err
	}
	password, err := config.Secret(path, 12)
	if err != nil {
		return "", err
	}
	return password, newService(cfg, st, nil, &Options{}).SaveUser(ctx, core.System, "admin", password, core.RoleAdmin)
}

// withServer sets up a server role (configuration, logger and a store that
// must already be migrated), runs fn and closes the store.
func (a *app) withServer(ctx context.Context, fn func(*config.Config, *sqlstore.Store, *slog.Logger) error) error {
	cfg, st, logger, err := a.serverSetup(ctx, false)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := startTracing(cfg, a.opts, logger); err != nil {
		return err
	}
	return fn(cfg, st, logger)
}

func (a *app) apiServerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "api-server",
		Short: "Serve the REST API (/api/v2) and the Execution API (/execution) for workers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withServer(cmd.Context(), func(cfg *config.Config, st *sqlstore.Store, logger *slog.Logger) error {
				srv, err := newAPIServer(cfg, st, a.opts, logger)
				if err != nil {
					return err
				}
				return runServices(cmd.Context(), nil, a.withMetrics(cfg, logger, []runner{srv}))
			})
		},
	}
}

func (a *app) schedulerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scheduler",
		Short: "Parse DAG files, create runs and move task instances through their states",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withServer(cmd.Context(), func(cfg *config.Config, st *sqlstore.Store, logger *slog.Logger) error {
				return saidStopped(logger, "scheduler", runServices(cmd.Context(), nil, a.withMetrics(cfg, logger, newScheduler(cfg, st, a.opts, logger))))
			})
		},
	}
}

func (a *app) triggererCmd() *cobra.Command {
	var capacity int
	cmd := &cobra.Command{
		Use:   "triggerer",
		Short: "Run triggers: the waits of deferred tasks (any number of triggerers may share a PostgreSQL database)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("capacity") {
				a.opts.Environ = append(a.opts.Environ, fmt.Sprintf("WEIR__TRIGGERER__CAPACITY=%d", capacity))
			}
			return a.withServer(cmd.Context(), func(cfg *config.Config, st *sqlstore.Store, logger *slog.Logger) error {
				logs, _, err := taskLogs(cfg, st)
				if err != nil {
					return err
				}
				return saidStopped(logger, "triggerer", runServices(cmd.Context(), nil, a.withMetrics(cfg, logger, []runner{newTriggerer(cfg, st, a.opts, logger, logs)})))
			})
		},
	}
	cmd.Flags().IntVar(&capacity, "capacity", 0, "most triggers to run at once (default [triggerer] capacity)")
	return cmd
}

func (a *app) workerCmd() *cobra.Command {
	var apiURL, token, name string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Claim and run task instances; talks only HTTP to an api-server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := a.config()
			if err != nil {
				return err
			}
			if apiURL == "" {
				apiURL = cfg.API.URL()
			}
			if token == "" {
				token = a.getenv("WEIR_WORKER_TOKEN")
			}
			// Without a credential the worker mints one from this machine's
			// signing keys; it never makes a key (that one would match no
			// api-server's, and a worker needs none: docs/deployment.md).
			if token == "" && !hasSigningKeys(cfg, jwtKeys) {
				return fmt.Errorf("no worker credential: pass --token or set WEIR_WORKER_TOKEN with one made by " +
					"`weir tokens create --worker NAME` on a machine that has the api-servers' [api_auth] jwt_secret " +
					"(this one has none, and a worker does not need it)")
			}
			logger := newLogger(a.opts.Stderr, cfg.Logging.Level)
			cfg.TightenSecrets(logger)
			// Its tasks run as its user: they must not read its credential
			// from its /proc/<pid>/environ (docs/security.md).
			if err := taskproc.HideFromTasks(); err != nil {
				logger.Warn("the worker's memory and environment stay readable by its tasks", "err", err)
			}
			w, err := newWorker(cfg, apiURL, name, token, a.opts, logger, false)
			if err != nil {
				return err
			}
			logger.Info("worker connecting", "api_url", apiURL, "worker", w.WorkerID)
			return runServices(cmd.Context(), []runner{w}, a.withMetrics(cfg, logger, nil))
		},
	}
	cmd.Flags().StringVar(&apiURL, "api-url", "", "api-server base URL, or several comma-separated: the worker moves to the next when one does not answer (default [api] base_url)")
	cmd.Flags().StringVar(&token, "token", "", "worker credential (default $WEIR_WORKER_TOKEN, else minted from the local signing key)")
	cmd.Flags().StringVar(&name, "name", "", "worker name; must match the credential's subject (default host-pid)")
	return cmd
}

// saidStopped logs that role stopped when it stopped cleanly (as the
// api-server and the worker say), so that an operator sees a SIGTERM was
// heard; an error is the command's to print.
func saidStopped(logger *slog.Logger, role string, err error) error {
	if err == nil {
		logger.Info(role + " stopped")
	}
	return err
}
