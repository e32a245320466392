package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// standalone is one child `weir standalone` (this binary in serve mode)
// on a fresh home and database, with a REST client logged in as admin.
// Every scenario runs in one.
type standalone struct {
	c      *client
	home   string
	log    string // the child's output
	cmd    *exec.Cmd
	exited bool
	drops  []func()
	// done closes when the child (watch) exits, with waitErr.
	done    chan struct{}
	waitErr error
}

// startStandalone creates a home (and, on PostgreSQL, a fresh database),
// starts the child with the options' settings plus extraEnv
// (WEIR__SECTION__KEY=V), waits until it answers and logs in. Call close
// when done, also after an error.
func startStandalone(ctx context.Context, o *options, rep int, extraEnv ...string) (s *standalone, err error) {
	s = &standalone{}
	defer func() {
		if err != nil {
			s.close()
			s = nil
		}
	}()
	if s.home, err = os.MkdirTemp(o.homes, "enginebench-"); err != nil {
		return s, err
	}
	dags := filepath.Join(s.home, "dags")
	if err := os.MkdirAll(dags, 0o750); err != nil {
		return s, err
	}
	port, err := freePort()
	if err != nil {
		return s, err
	}
	env := append(os.Environ(), "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false")
	if o.engine == "postgres" {
		dsn, drop, err := freshDatabase(o.dsn, fmt.Sprintf("enginebench_%d_%d", os.Getpid(), rep))
		if err != nil {
			return s, err
		}
		s.drops = append(s.drops, drop)
		env = append(env, "WEIR__DATABASE__CONN="+dsn)
	}
	for _, kv := range append(strings.Split(o.env, ","), extraEnv...) {
		if kv != "" {
			env = append(env, kv)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return s, err
	}
	s.cmd = exec.Command(self, "serve", "--home", s.home, "--dags", dags, "--port", fmt.Sprint(port)) //nolint:gosec // this binary
	s.cmd.Env = env
	logf, err := os.Create(filepath.Join(s.home, "standalone.log"))
	if err != nil {
		return s, err
	}
	defer logf.Close() // the child has its own descriptor
	s.log = logf.Name()
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if o.verbose {
		s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := s.cmd.Start(); err != nil {
		return s, err
	}
	s.watch()
	s.c = &client{base: fmt.Sprintf("http://127.0.0.1:%d/api/v2", port)}
	if err := s.c.waitHealthy(ctx, s.died); err != nil {
		return s, fmt.Errorf("standalone did not become healthy (log: %s): %w", s.log, err)
	}
	pw, err := os.ReadFile(filepath.Join(s.home, "secrets", "admin_password"))
	if err != nil {
		return s, err
	}
	return s, s.c.login(ctx, "admin", strings.TrimSpace(string(pw)))
}

// ready waits until dag is known and unpaused, then lets the scheduler's
// first passes and the DAG processor's first sync settle so that they are
// not counted.
func (s *standalone) ready(ctx context.Context, dag string) error {
	if err := s.c.waitDag(ctx, dag); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	return nil
}

// cpu returns the CPU time (user + system, every thread) the child has
// used so far, and that of its children it has waited for (the tasks'
// processes), from /proc/PID/stat (clock ticks of 10 ms).
func (s *standalone) cpu() (self, children time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): state is field 3, utime, stime, cutime and cstime are
	// fields 14 to 17.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 15 {
		return 0, 0, fmt.Errorf("short /proc/%d/stat", s.cmd.Process.Pid)
	}
	var ticks [4]int64
	for i := range ticks {
		if _, err := fmt.Sscan(f[11+i], &ticks[i]); err != nil {
			return 0, 0, err
		}
	}
	const tick = 10 * time.Millisecond
	return time.Duration(ticks[0]+ticks[1]) * tick, time.Duration(ticks[2]+ticks[3]) * tick, nil
}

// rss returns the child's resident set size now, in KiB (VmRSS).
func (s *standalone) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", s.cmd.Process.Pid)
}

// watch waits for the child just started, closing done when it exits.
func (s *standalone) watch() {
	s.done = make(chan struct{})
	go func() { s.waitErr = s.cmd.Wait(); close(s.done) }()
}

// died returns why the child has exited, or nil while it runs: a child
// that dies at start (a bad setting in -env) fails the run instead of
// leaving it waiting.
func (s *standalone) died() error {
	select {
	case <-s.done:
		why := s.waitErr
		if why == nil {
			why = errors.New("exit status 0")
		}
		return fmt.Errorf("it exited (%w), saying: %s", why, lastLine(s.log))
	default:
		return nil
	}
}

// lastLine returns the last line of the file at path (what a process that
// stopped at start said last), or why it cannot.
func lastLine(path string) string {
	b, err := os.ReadFile(path) //nolint:gosec // G304: the child's log, in the bench's own home
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// wait waits for the child to exit.
func (s *standalone) wait() error {
	<-s.done
	return s.waitErr
}

// stop ends the child with SIGTERM (a graceful shutdown) and returns its
// peak RSS in KiB from getrusage.
func (s *standalone) stop() (peakRSSKB int64, err error) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	werr := s.wait()
	s.exited = true
	if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peakRSSKB = ru.Maxrss // kilobytes on Linux
	}
	if werr != nil {
		return peakRSSKB, fmt.Errorf("standalone exited: %w (log: %s)", werr, s.log)
	}
	return peakRSSKB, nil
}

// close stops a child still running (SIGTERM, so that a CPU profile is
// written; SIGKILL after 10 s) and removes its home and database.
func (s *standalone) close() {
	if s.cmd != nil && s.cmd.Process != nil && !s.exited {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		t := time.AfterFunc(10*time.Second, func() { _ = s.cmd.Process.Kill() })
		_ = s.wait()
		t.Stop()
		s.exited = true
	}
	for i := len(s.drops) - 1; i >= 0; i-- {
		s.drops[i]()
	}
}
