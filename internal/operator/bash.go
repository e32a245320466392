package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/taskproc"
)

// SkipExitCode is the bash exit code that skips the try (Airflow's default
// skip_on_exit_code).
const SkipExitCode = 99

// DeferExitCode is the bash exit code that defers the try on the trigger
// `weir task defer` recorded (docs/triggers.md#deferring-a-shell-task).
const DeferExitCode = 100

// Variables a bash task's process reads to defer and to resume.
const (
	EnvDeferFile    = "WEIR_DEFER_FILE"    // where `weir task defer` writes the request
	EnvResumeMethod = "WEIR_RESUME_METHOD" // the resumed try's next_method ("" on a first step)
	EnvTriggerEvent = "WEIR_TRIGGER_EVENT" // the event payload that resumed it (JSON)
	EnvNextKwargs   = "WEIR_NEXT_KWARGS"   // the deferral's next_kwargs (JSON)
)

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

	if cwd != "" {
		if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("argument \"cwd\": %q is not a folder here: %w", cwd, core.ErrInvalid)
		}
	}
	deferFile := r.deferFile(req)
	defer func() { _ = os.Remove(deferFile) }()
	command = req.ExitTrap + command
	last := &lastLine{}
	// One pipe for both, as Airflow's stderr=STDOUT: the log keeps the
	// order the command wrote its lines in, and the return value is the
	// last line of either.
	logw := &syncWriter{w: req.Log}
	out := io.MultiWriter(logw, last)
	// The group dies with the worker process, however it dies; a cancelled
	// ctx sends it SIGTERM.
	cmd, group, release, err := r.startBash(ctx, command, cwd, r.bashEnvMap(req, argEnv, deferFile), out)
	if err != nil {
		return nil, fmt.Errorf("start bash: %w", err)
	}
	how := "started bash"
	if cmd.Args[len(cmd.Args)-1] == spareLoader {
		how = "bash started ahead (a spare shell)"
	}
	req.logf("%s, pid %d, process group %d", how, cmd.Process.Pid, group.PGID)
	err = taskproc.Wait(cmd)
	// Whatever happened, nothing of the group outlives the try.
	group.Close()
	release()
	if last.unterminated() { // weir's next line starts a line of its own
		_, _ = logw.Write([]byte("\n"))
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("bash command killed: %w", cancelled(ctx))
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if code == skipCode {
			return nil, fmt.Errorf("bash command exited with code %d: %w", code, ErrSkipped)
		}
		if code == DeferExitCode {
			return nil, readDeferRequest(deferFile)
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

// startBash starts a try's shell: the spare shell when it can run the
// try, else one of its own. release, called once cmd was waited for, ends
// what watches ctx and counts the try ended.
func (r *Runner) startBash(ctx context.Context, command, cwd string, env map[string]string, out io.Writer) (cmd *exec.Cmd, group *taskproc.Group, release func(), err error) {
	ended := r.bashStarted()
	var script string
	fits := func(sh *spareShell) (ok bool) { script, ok = spareScript(sh.env, env, cwd, command); return ok }
	if sh := r.takeSpare(ctx, fits); sh != nil {
		if unhook, ok := sh.run(ctx, script, out); ok {
			return sh.cmd, sh.group, func() { unhook(); ended() }, nil
		}
	}
	cmd = bashCommand(ctx, command)
	cmd.Dir = cwd
	cmd.Env = envList(env)
	cmd.Stdin = nullStdin()
	w := pooledCopy{out}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = r.killGrace()
	group, err = taskproc.Start(cmd, r.Groups)
	if err != nil {
		ended()
		return nil, nil, nil, err
	}
	return cmd, group, ended, nil
}

// bashEnv is the worker env + task env + arg env + the API variables, with
// PathDir first on PATH.
func (r *Runner) bashEnv(req *Request, argEnv map[string]string, deferFile string) []string {
	return envList(r.bashEnvMap(req, argEnv, deferFile))
}

// bashEnvMap is bashEnv as a map; a nil req gives the worker env alone
// (with PathDir first on PATH), a spare shell's.
func (r *Runner) bashEnvMap(req *Request, argEnv map[string]string, deferFile string) map[string]string {
	m := map[string]string{}
	addEnv(m, r.baseEnv())
	if req != nil {
		maps.Copy(m, req.Task.Env)
		maps.Copy(m, argEnv)
		addEnv(m, req.Env)
		m[EnvDeferFile] = deferFile
		if rs := req.Resume; rs != nil {
			m[EnvResumeMethod], m[EnvTriggerEvent], m[EnvNextKwargs] = rs.Method, string(rs.Event), string(rs.Kwargs)
		}
	}
	if r.PathDir != "" {
		if p := m["PATH"]; p != "" {
			m["PATH"] = r.PathDir + ":" + p
		} else {
			m["PATH"] = r.PathDir + ":/usr/local/bin:/usr/bin:/bin"
		}
	}
	return m
}

// envList is m as an environment, sorted by name.
func envList(m map[string]string) []string {
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

// pooledCopy is the writer of a shell's output: exec copies the output
// pipe into it with ReadFrom, through a buffer from a pool, where io.Copy
// would allocate 32 KiB a try (a sixth of what a wide bash run allocates).
type pooledCopy struct{ io.Writer }

var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (p pooledCopy) ReadFrom(r io.Reader) (int64, error) {
	b := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(b)
	return io.CopyBuffer(p.Writer, r, *b)
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

// unterminated reports whether the output ends in a line without its line
// break.
func (l *lastLine) unterminated() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.partial) > 0
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

// deferFile is where this try's `weir task defer` writes its request: in
// the worker's private directory (DeferDir) when it has one.
func (r *Runner) deferFile(req *Request) string {
	dir := r.DeferDir
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, fmt.Sprintf("%s.try%d.defer.json", req.TI.ID, req.TI.TryNumber))
}

// readDeferRequest turns the request `weir task defer` wrote into the
// deferral of a command that exited with DeferExitCode.
func readDeferRequest(path string) error {
	b, err := os.ReadFile(path) //nolint:gosec // the worker names the path
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("bash command exited with code %d (defer) but did not run `weir task defer` first", DeferExitCode)
	}
	if err != nil {
		return fmt.Errorf("read the defer request: %w", err)
	}
	var d core.Deferral
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("the defer request at %s is not a deferral: %w", path, err)
	}
	if d.Trigger.Type == "" {
		return fmt.Errorf("the defer request at %s names no trigger", path)
	}
	return Defer(d)
}
