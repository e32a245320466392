// Package command holds the command trigger: a long-running process, in
// any language, whose stdout lines that are JSON values are the trigger's
// events, in order; its stderr goes to the trigger log. It is the door
// through which watchers and streams written outside Go report events.
//
// The process runs in a process group of its own that dies with the
// triggerer however the triggerer dies (taskproc, as bash tasks); a
// cancelled trigger sends the group SIGTERM, then SIGKILL after KillGrace.
package command

import (
	"bufio"
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weirflow/weir/internal/taskproc"
	"github.com/weirflow/weir/internal/trigger"
)

// KillGrace is how long a cancelled command's group has between SIGTERM
// and SIGKILL.
const KillGrace = 5 * time.Second

// MaxLine bounds one stdout line (one event); a longer line is logged as
// too long and skipped.
const MaxLine = 1 << 20

// stderrKept is how many last stderr lines a failure message quotes.
const stderrKept = 10

// Type is the command trigger. kwargs: {"argv": ["python3", "watch.py"]}
// or {"command": "tail -F /var/log/x | jq -c ..."}, with optional env
// (a map), cwd (an absolute folder) and, for a watcher, poll_interval.
// Producing a stream, every JSON line is an envelope; the process is told
// where the stream stands in WEIR_STREAM_ID and WEIR_STREAM_LAST_INDEX
// (-1 for none) and prints the items after that index.
var Type = trigger.Type{
	Name:    "command",
	Summary: "runs a process for as long as the trigger; each JSON line it prints is an event, its stderr goes to the log",
	New:     newTrigger,
	Uses:    trigger.UseDeferral | trigger.UseWatcher | trigger.UseStream,
}

// commandTrigger is a built command trigger.
type commandTrigger struct {
	argv     []string
	env      map[string]string
	cwd      string
	interval time.Duration // a watcher's wait between runs
}

func newTrigger(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		Argv    []string          `json:"argv"`
		Command *string           `json:"command"`
		Env     map[string]string `json:"env"`
		Cwd     *string           `json:"cwd"`
		// PollInterval is a watcher's wait between runs of its process.
		PollInterval *string `json:"poll_interval"`
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	c := &commandTrigger{env: k.Env}
	switch {
	case k.Argv != nil && k.Command != nil:
		return nil, trigger.Invalid("argv", "cannot be given with command (argv runs a program, command a bash script)")
	case k.Command != nil:
		if strings.TrimSpace(*k.Command) == "" {
			return nil, trigger.Invalid("command", "must not be empty")
		}
		c.argv = []string{"bash", "-c", *k.Command}
	case k.Argv == nil:
		return nil, trigger.Invalid("argv", "or command is required (a program and its arguments, or a bash script)")
	case len(k.Argv) == 0 || k.Argv[0] == "":
		return nil, trigger.Invalid("argv", "must start with a program name or path")
	default:
		c.argv = k.Argv
	}
	for name := range k.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, trigger.Invalid("env", "holds the variable name %q; a name is non-empty without '=' or NUL", name)
		}
	}
	if k.Cwd != nil {
		if !filepath.IsAbs(*k.Cwd) {
			return nil, trigger.Invalid("cwd", "must be an absolute folder (the triggerer's working folder is not the DAG's), got %q", *k.Cwd)
		}
		c.cwd = *k.Cwd
	}
	var err error
	if c.interval, err = trigger.Interval("poll_interval", k.PollInterval, trigger.DefaultPollInterval); err != nil {
		return nil, err
	}
	return c, nil
}

// Run runs the process once for a deferral, or again and again for a
// watcher (watch.go).
func (c *commandTrigger) Run(ctx context.Context, rt *trigger.Runtime) error {
	if rt.Watcher != nil {
		return c.watch(ctx, rt)
	}
	var extra map[string]string
	if rt.Stream != nil {
		extra = map[string]string{"WEIR_STREAM_ID": rt.Stream.ID, "WEIR_STREAM_LAST_INDEX": strconv.FormatInt(rt.Stream.LastIndex, 10)}
	}
	p, err := c.start(ctx, rt, extra)
	if err != nil {
		return err
	}
	events, emitErr := c.relay(ctx, rt, p.stdout)
	if emitErr != nil {
		p.stop() // SIGTERM to the group, SIGKILL after KillGrace
	}
	waitErr := p.wait()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case emitErr != nil:
		return emitErr
	}
	if waitErr == nil && rt.Stream != nil {
		return nil // a stream may be empty, or resumed at its end
	}
	return c.exitError(waitErr, events, p.stderr)
}

// proc is one started process of the command.
type proc struct {
	cmd        *exec.Cmd
	group      *taskproc.Group
	stdout     io.Reader
	stderr     *stderrTail
	stderrDone chan struct{}
	finished   chan struct{}
	stop       context.CancelFunc
}

// start starts the process with extra variables over its environment;
// its stderr goes to the trigger log. Call wait once stdout is read.
func (c *commandTrigger) start(ctx context.Context, rt *trigger.Runtime, extra map[string]string) (*proc, error) {
	procCtx, stop := context.WithCancel(ctx)
	cmd := exec.CommandContext(procCtx, c.argv[0], c.argv[1:]...) //nolint:gosec // running the trigger's command is the point
	if cmd.Err != nil {
		stop()
		return nil, trigger.Permanent(fmt.Errorf("command %q: %w", c.argv[0], cmd.Err))
	}
	cmd.Dir = c.cwd
	cmd.Env = c.environ(extra)
	cmd.WaitDelay = KillGrace
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		stop()
		return nil, fmt.Errorf("command %q: %w", c.argv[0], err)
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		stop()
		return nil, fmt.Errorf("command %q: %w", c.argv[0], err)
	}
	group, err := taskproc.Start(cmd, nil)
	if err != nil {
		stop()
		return nil, trigger.Permanent(fmt.Errorf("start command %q: %w", c.argv[0], err))
	}
	p := &proc{cmd: cmd, group: group, stdout: stdout, stderr: &stderrTail{}, stderrDone: make(chan struct{}), finished: make(chan struct{}), stop: stop}
	go killAfterGrace(procCtx, p.finished, group)
	rt.Logf("started %s, pid %d, process group %d", c.argv[0], cmd.Process.Pid, group.PGID)
	go func() {
		defer close(p.stderrDone)
		p.stderr.read(rt, stderrPipe)
	}()
	return p, nil
}

// wait waits for the process to exit (both pipes read to their end first)
// and leaves nothing of its group behind.
func (p *proc) wait() error {
	<-p.stderrDone
	err := taskproc.Wait(p.cmd)
	close(p.finished)
	p.group.Close()
	p.stop()
	return err
}

// killAfterGrace SIGKILLs the group KillGrace after ctx ends (exec sends
// it SIGTERM at once), unless finished closes first: a process that
// ignores SIGTERM while holding stdout open would otherwise block the
// relay.
func killAfterGrace(ctx context.Context, finished <-chan struct{}, group *taskproc.Group) {
	select {
	case <-finished:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(KillGrace)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		_ = group.Signal(syscall.SIGKILL)
	}
}

// relay emits each JSON line of stdout in order until end of file, and
// returns how many it emitted; an Emit error stops it. For a stream, the
// complete lines already read together go in one EmitBatch (one
// transaction, up to relayBatch events), so a fast command is not held
// to one commit per line; a line is never held back waiting for more.
func (c *commandTrigger) relay(ctx context.Context, rt *trigger.Runtime, stdout io.Reader) (int, error) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	events := 0
	var batch []any
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var err error
		if len(batch) == 1 {
			err = rt.Emit(ctx, batch[0])
		} else {
			err = rt.EmitBatch(ctx, batch...)
		}
		if err == nil {
			events += len(batch)
		}
		batch = batch[:0]
		return err
	}
	for {
		line, tooLong, err := readLine(r)
		switch text := strings.TrimSpace(string(line)); {
		case tooLong:
			rt.Logf("WARNING: a stdout line longer than %d bytes was skipped", MaxLine)
		case text == "":
		case json.Valid([]byte(text)):
			batch = append(batch, json.RawMessage(text))
		default:
			rt.Logf("WARNING: a stdout line is not JSON, so not an event: %s", clip(text))
		}
		if err == nil && rt.Stream != nil && len(batch) < relayBatch && lineBuffered(r) {
			continue // more complete lines are here already: same batch
		}
		if ferr := flush(); ferr != nil {
			return events, ferr
		}
		if err != nil {
			return events, nil // end of file, or the pipe closed
		}
	}
}

// relayBatch bounds the events of one EmitBatch of a stream.
const relayBatch = 500

// lineBuffered reports whether r holds a complete line already, which a
// read returns without waiting.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// exitError is the result of a command that ended by itself: done after at
// least one event with exit code 0, else an error with the code and the
// last stderr lines.
func (c *commandTrigger) exitError(waitErr error, events int, stderr *stderrTail) error {
	var exitErr *exec.ExitError
	switch {
	case waitErr == nil && events > 0:
		return nil
	case waitErr == nil:
		return trigger.Permanent(fmt.Errorf("command %s exited with code 0 without printing an event (a JSON line on stdout)%s", c.argv[0], stderr.tail()))
	case errors.As(waitErr, &exitErr) && exitErr.ExitCode() >= 0:
		return trigger.Permanent(fmt.Errorf("command %s exited with code %d after %d event(s)%s", c.argv[0], exitErr.ExitCode(), events, stderr.tail()))
	}
	return trigger.Permanent(fmt.Errorf("command %s: %w (after %d event(s))%s", c.argv[0], waitErr, events, stderr.tail()))
}

// passedEnv are the triggerer's variables a command sees: the basics a
// program needs, never the triggerer's own configuration and secrets
// (WEIR__DATABASE__CONN, WEIR_CONN_*, AWS_* credentials, ...).
var passedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"}

// environ is the basics of the triggerer's environment (passedEnv) with
// env, then extra, over them.
func (c *commandTrigger) environ(extra map[string]string) []string {
	m := map[string]string{}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			m[k] = v
		}
	}
	maps.Copy(m, c.env)
	maps.Copy(m, extra)
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return out
}

// readLine reads one line without its newline; a line over MaxLine is
// read to its end and reported as too long. err is set at end of input
// (line then holds an unterminated last line, if any).
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > MaxLine+1 {
				line, tooLong = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}
