package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/weirflow/weir/internal/cli"
	"github.com/weirflow/weir/internal/operator"
)

// serveRole runs one weir command (api-server, scheduler, worker, db
// migrate, ...) with the benchmark DAGs and the Go no-op compiled in: a
// process of a -workers deployment.
func serveRole(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reg := operator.NewRegistry()
	if err := reg.Register("noop", func(context.Context, operator.TaskContext) (any, error) { return nil, nil }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return cli.Run(ctx, args, cli.Options{DAGs: benchDAGs(), Functions: reg})
}

// startFleet is startStandalone for -workers N: an api-server, a scheduler
// and N worker processes (each with its own home, as on separate machines)
// on a fresh PostgreSQL database, the signing keys shared through the
// environment (docs/deployment.md). The returned standalone's process is
// the api-server; the scheduler and workers are stopped by close.
func startFleet(ctx context.Context, o *options, rep int, extraEnv ...string) (*standalone, error) {
	if o.engine != "postgres" {
		return nil, fmt.Errorf("-workers needs -engine postgres (several processes share one database)")
	}
	s := &standalone{}
	if err := s.launchFleet(ctx, o, rep, extraEnv); err != nil {
		s.close() // what started is stopped, the database dropped
		return nil, err
	}
	return s, nil
}

// launchFleet fills s: its home, database, processes and logged-in client.
func (s *standalone) launchFleet(ctx context.Context, o *options, rep int, extraEnv []string) error {
	home, err := os.MkdirTemp(o.homes, "enginebench-fleet-")
	if err != nil {
		return err
	}
	s.home = home
	dsn, drop, err := freshDatabase(o.dsn, fmt.Sprintf("enginebench_%d_%d", os.Getpid(), rep))
	if err != nil {
		return err
	}
	s.drops = append(s.drops, drop)
	port, err := freePort()
	if err != nil {
		return err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	env := append(os.Environ(), "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false", "WEIR__DATABASE__CONN="+dsn,
		fmt.Sprintf("WEIR__API__PORT=%d", port), "WEIR__API_AUTH__JWT_SECRET="+randomKey(), "WEIR__API_AUTH__SECRET_KEY="+randomKey())
	for _, kv := range append(strings.Split(o.env, ","), extraEnv...) {
		if kv != "" {
			env = append(env, kv)
		}
	}
	f := &fleetProcs{dir: s.home, dags: filepath.Join(s.home, "dags"), env: env, verbose: o.verbose}
	if err := os.MkdirAll(f.dags, 0o750); err != nil { // no YAML DAGs: the Go ones are compiled in
		return err
	}
	const password = "enginebench"
	for _, args := range [][]string{{"db", "migrate"}, {"users", "create", "--username", "admin", "--role", "admin", "--password", password}} {
		if err := f.run("admin", args...); err != nil {
			return err
		}
	}
	if s.cmd, err = f.start("api-server", "api-server"); err != nil {
		return err
	}
	s.log = f.logOf("api-server")
	s.watch()
	s.drops = append(s.drops, f.stopAll) // runs before the database is dropped
	if _, err := f.start("scheduler", "scheduler"); err != nil {
		return err
	}
	for i := 1; i <= o.workers; i++ {
		name := fmt.Sprintf("w%d", i)
		if _, err := f.start(name, "worker", "--api-url", base, "--name", name); err != nil {
			return err
		}
	}
	s.c = &client{base: base + "/api/v2"}
	if err := s.c.waitHealthy(ctx, s.died); err != nil {
		return fmt.Errorf("api-server did not become healthy (log: %s): %w", s.log, err)
	}
	if err := s.c.login(ctx, "admin", password); err != nil {
		return err
	}
	return waitWorkers(ctx, s.c, o.workers)
}

// waitWorkers waits until n workers have heartbeated, so that a run does
// not count their start.
func waitWorkers(ctx context.Context, c *client, n int) error {
	return poll(ctx, 100*time.Millisecond, func() (bool, error) {
		var h struct {
			Instances []struct {
				Role  string `json:"role"`
				State string `json:"state"`
			} `json:"instances"`
		}
		if _, err := c.do(ctx, http.MethodGet, "/monitor/health", nil, &h); err != nil {
			return false, err
		}
		up := 0
		for _, in := range h.Instances {
			if in.Role == "worker" && in.State == "healthy" {
				up++
			}
		}
		return up >= n, nil
	})
}

// fleetProcs starts the processes of a -workers deployment, each with a
// home of its own under dir.
type fleetProcs struct {
	dir     string
	dags    string // the (empty) DAG folder every role is given
	env     []string
	verbose bool
	procs   []*exec.Cmd // besides the api-server, which standalone stops
}

func (f *fleetProcs) logOf(name string) string { return filepath.Join(f.dir, name+".log") }

// command prepares `enginebench role args... --home dir/name --dags dags`.
func (f *fleetProcs) command(name string, args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append(append([]string{"role"}, args...), "--home", filepath.Join(f.dir, name), "--dags", f.dags)...) //nolint:gosec // this binary
	cmd.Env = f.env
	logf, err := os.OpenFile(f.logOf(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if f.verbose {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	return cmd, nil
}

// run runs a short command to completion.
func (f *fleetProcs) run(name string, args ...string) error {
	cmd, err := f.command(name, args...)
	if err != nil {
		return err
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w (log: %s)", strings.Join(args, " "), err, f.logOf(name))
	}
	return nil
}

// start starts a long-running role.
func (f *fleetProcs) start(name string, args ...string) (*exec.Cmd, error) {
	cmd, err := f.command(name, args...)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if name != "api-server" {
		f.procs = append(f.procs, cmd)
	}
	return cmd, nil
}

// stopAll stops the workers and the scheduler (SIGKILL: the figures are
// taken) and waits for them.
func (f *fleetProcs) stopAll() {
	for _, cmd := range f.procs {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

// randomKey is a fresh signing key for one deployment.
func randomKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
