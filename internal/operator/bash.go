package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/taskproc"
)

// SkipExitCode is the bash exit code that skips the try (Airflow's default
// skip_on_exit_code).
const SkipExitCode = 99

// runBash runs bash_command with `bash -c` in its own process group
// (taskproc), so that a timeout or kill takes the whole group (children
// included) and the group dies with the worker process. Args:
// bash_command, env (map), cwd, do_xcom_push (the last stdout line becomes
// the return value), skip_on_exit_code (default 99).
func (r *Runner) runBash(ctx context.Context, req *Request) (*Result, error) {
	command, err := stringArg(req.Args, "bash_command", true)
	if err != nil {
		return nil, err
	}
	cwd, err := stringArg(req.Args, "cwd", false)
	if err != nil {
		return nil, err
	}
	push, err := boolArg(req.Args, "do_xcom_push")
	if err != nil {
		return nil, err
	}
	skipCode, err := intArg(req.Args, "skip_on_exit_code", SkipExitCode)
	if err != nil {
		return nil, err
	}
	argEnv, err := stringMapArg(req.Args, "env")
	if err != nil {
		return nil, err
	}

	if req.ExitFile != "" {
		command = exitTrap(req.ExitFile) + command
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", command) //nolint:gosec // running the task's command is the point
	cmd.Dir = cwd
	cmd.Env = r.bashEnv(req, argEnv)
	log := &syncWriter{w: req.Log}
	last := &lastLine{}
	cmd.Stdout = io.MultiWriter(log, last)
	cmd.Stderr = log
	cmd.WaitDelay = r.killGrace()

	// The group dies with the worker process, however it dies; a cancelled
	// ctx sends it SIGTERM.
	group, err := taskproc.Start(cmd, r.Groups)
	if err != nil {
		return nil, fmt.Errorf("start bash: %w", err)
	}
	req.logf("started bash, pid %d, process group %d", cmd.Process.Pid, group.PGID)
	err = cmd.Wait()
	// Whatever happened, nothing of the group outlives the try.
	group.Close()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("bash command killed: %w", cancelled(ctx))
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if code == skipCode {
			return nil, fmt.Errorf("bash command exited with code %d: %w", code, ErrSkipped)
		}
		return nil, fmt.Errorf("bash command failed with exit code %d", code)
	}
	if err != nil {
		return nil, fmt.Errorf("bash command: %w", err)
	}
	req.logf("bash command exited with code 0")
	if !push {
		return &Result{}, nil
	}
	v, _ := json.Marshal(last.String())
	return &Result{ReturnValue: v}, nil
}

// exitTrap is a line that makes bash write its exit status to path when
// it exits, whatever ends the command (but SIGKILL), and exit with that
// status whether or not the file could be written (set -e included). A
// command that sets its own EXIT trap or execs another program replaces
// it: its status is then known to the worker alone.
func exitTrap(path string) string {
	return "__weir_exit_file='" + strings.ReplaceAll(path, "'", `'\''`) + "'; " +
		`trap '__weir_exit=$?; { echo "$__weir_exit" > "$__weir_exit_file"; } 2>/dev/null || :; exit "$__weir_exit"' EXIT` + "\n"
}

// bashEnv is the worker env + task env + arg env + the API variables, with
// PathDir first on PATH.
func (r *Runner) bashEnv(req *Request, argEnv map[string]string) []string {
	m := map[string]string{}
	addEnv(m, r.baseEnv())
	maps.Copy(m, req.Task.Env)
	maps.Copy(m, argEnv)
	addEnv(m, req.Env)
	if r.PathDir != "" {
		if p := m["PATH"]; p != "" {
			m["PATH"] = r.PathDir + ":" + p
		} else {
			m["PATH"] = r.PathDir + ":/usr/local/bin:/usr/bin:/bin"
		}
	}
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

func addEnv(m map[string]string, kvs []string) {
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
}

// lastLine remembers the last non-empty line written to it.
type lastLine struct {
	mu      sync.Mutex
	partial []byte
	last    string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		if s := strings.TrimSpace(string(l.partial[:i])); s != "" {
			l.last = s
		}
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 64<<10 { // a huge unterminated line: keep its tail
		l.partial = l.partial[len(l.partial)-64<<10:]
	}
	return len(p), nil
}

// String returns the last line, including an unterminated final one.
func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := strings.TrimSpace(string(l.partial)); s != "" {
		return s
	}
	return l.last
}
