package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/weirflow/weir/internal/taskproc"
)

// A spare shell is a bash started before the try that runs in it, so that
// a try does not wait for bash to start (loading and linking it, reading
// its locale: most of what a `bash -c true` costs). It waits in a process
// group of its own (taskproc: it dies with the worker, and its ledger
// record lets the worker's next life kill it), with the worker's
// environment, for a script: the try's variables exported over its own,
// its folder, the exit-file trap and the command, evaluated as `bash -c`
// would run the command (ADR 0036 lists what differs: the text of a
// syntax error, $BASH_EXECUTION_STRING). A try whose variables bash reads
// only as it starts, or whose command or folder a script cannot carry,
// starts its shell as before.
//
// The shell reads the script from fd 3, a file in memory (memfd) the
// worker writes at offset 0 (bash reads a pipe a byte at a time, a file in
// blocks), once a line arrives on fd 4; fd 4 at end of file (the spare
// thrown away) makes it exit. The loader and the script's preamble are one line each
// joined to the command's first, so that bash numbers the command's lines
// (in its messages, $LINENO) as it numbers them in `bash -c`.
const spareLoader = `read -r __weir_begin <&4 || exit 0; exec 4<&-; IFS= read -r -d '' __weir_script <&3; exec 3<&-; eval "$__weir_script"`

// spareShell is a shell waiting for its try.
type spareShell struct {
	cmd    *exec.Cmd
	group  *taskproc.Group
	stop   context.CancelFunc // its context: SIGTERM to the group, SIGKILL after KillGrace
	begin  *os.File           // the write end of its fd 4
	script *os.File           // its fd 3
	out    *heldWriter
	env    map[string]string // the environment it started with
	bash   string            // the bash it runs
}

// spareShells keeps up to maxSpareShells spare shells, made one at a time
// after each take from a worker's first bash try on, or one ahead of the
// first when bash tries are known to come (WarmSpare: `weir dags test`),
// and then no more than are still to come (a one-task test makes none
// after its warmed one). Two, so that the one a try takes has had a whole
// try's time to start. A try that finds none ready but one being made
// waits for it, unless another try already does. None is made while as
// many bash tries run as the machine has cores: a spare's start then
// overlaps no idle time, it takes the CPU from them.
type spareShells struct {
	mu      sync.Mutex
	ready   []*spareShell // oldest first
	making  bool
	closed  bool
	running int            // bash tries between startBash and their release
	started int            // bash tries started in all
	known   int            // bash tries known to come in all (WarmSpare); 0 = not known
	refused bool           // the worker's environment rules spares out (errSparesRefused)
	maker   sync.WaitGroup // the goroutine making spares
	made    sync.Cond      // on mu: a spare was made, or the making stopped
	waiting bool           // a try waits for the spare being made (made)
}

const maxSpareShells = 2

// busyTries is how many bash tries running make the spares wait: as many
// as the machine has cores, at least two (one try alone leaves room).
func busyTries() int { return max(runtime.NumCPU(), 2) }

// Close ends the spare shells, waiting for one being made; the runner
// starts no other.
func (r *Runner) Close() {
	s := &r.spares
	s.mu.Lock()
	ready := s.ready
	s.ready, s.closed = nil, true
	s.made.Broadcast()
	s.mu.Unlock()
	for _, sh := range ready {
		sh.discard()
	}
	s.maker.Wait()
}

// takeSpare returns the oldest spare shell if fits accepts it (nil: none
// ready, it does not fit, or spares are off), and has the spares made up
// again. A spare that does not fit this try stays for the next. The caller
// counts among the running tries (bashStarted).
func (r *Runner) takeSpare(ctx context.Context, fits func(*spareShell) bool) *spareShell {
	if !r.SpareShell {
		return nil
	}
	s := &r.spares
	s.mu.Lock()
	// A spare whose start began before this try's is ready before a shell
	// the try would start itself: one try waits for it (others start their
	// own rather than queue behind the one maker).
	if s.made.L == nil {
		s.made.L = &s.mu
	}
	if len(s.ready) == 0 && s.making && !s.waiting && ctx.Err() == nil {
		s.waiting = true
		for len(s.ready) == 0 && s.making && !s.closed {
			s.made.Wait()
		}
		s.waiting = false
	}
	var sh *spareShell
	if len(s.ready) > 0 && fits(s.ready[0]) {
		sh = s.ready[0]
		s.ready = slices.Delete(s.ready, 0, 1)
	}
	if n := s.wanted(); n > 0 && s.running < busyTries() {
		r.makeSparesLocked(n)
	}
	s.mu.Unlock()
	return sh
}

// wanted is how many spares are worth holding after a take: as many as
// are kept, or, where the bash tries to come are known, no more than those
// after the ones started. s.mu is held.
func (s *spareShells) wanted() int {
	if s.known == 0 {
		return maxSpareShells
	}
	return min(maxSpareShells, s.known-s.started)
}

// WarmSpare has a spare shell made now, for the first of tries bash tries
// known to come (tries > 0), and no more spares made than the rest of them
// need: `weir dags test` of a DAG with bash tasks starts its first shell
// beside the run's first scheduling, and a one-task test starts one shell.
func (r *Runner) WarmSpare(tries int) {
	if !r.SpareShell || tries <= 0 {
		return
	}
	s := &r.spares
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known = tries
	r.makeSparesLocked(1)
}

// makeSparesLocked starts making spares until n are ready, unless that
// many are, or they are being made, or spares are closed or refused; s.mu
// is held.
func (r *Runner) makeSparesLocked(n int) {
	s := &r.spares
	if len(s.ready) >= n || s.making || s.closed || s.refused {
		return
	}
	s.making = true
	s.maker.Add(1) // before Close can wait for it
	go func() {
		defer s.maker.Done()
		r.makeSpares(n)
	}()
}

// bashStarted counts a bash try running until the returned func is
// called.
func (r *Runner) bashStarted() (ended func()) {
	s := &r.spares
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running++
	s.started++
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.running--
	}
}

// makeSpares starts shells until n are ready.
func (r *Runner) makeSpares(n int) {
	s := &r.spares
	for {
		sh, err := r.startSpare()
		s.mu.Lock()
		s.refused = s.refused || errors.Is(err, errSparesRefused)
		if err == nil && !s.closed {
			s.ready, sh = append(s.ready, sh), nil
		}
		more := err == nil && !s.closed && len(s.ready) < n && s.running < busyTries()
		s.making = more
		s.made.Broadcast()
		s.mu.Unlock()
		if sh != nil {
			sh.discard()
		}
		if !more {
			// An error leaves the spares short: the next try starts its
			// shell itself, and meets the error there if it lasts.
			return
		}
	}
}

// errSparesRefused: the worker's environment holds a variable bash acts
// on as it starts (a file it runs, options such as xtrace): a spare would
// act on it before its try, where the try's own shell acts on it in the
// try's folder, with the try's variables.
var errSparesRefused = errors.New("no spare shells")

// startSpare starts a shell with the environment a try would have before
// its own variables.
func (r *Runner) startSpare() (sh *spareShell, err error) {
	env := r.bashEnvMap(nil, nil, "")
	for _, k := range []string{"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS"} {
		if _, set := env[k]; set {
			return nil, fmt.Errorf("%w: the worker's environment sets %s", errSparesRefused, k)
		}
	}
	fd, err := unix.MemfdCreate("weir-shell-script", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	script := os.NewFile(uintptr(fd), "weir-shell-script")
	waitR, begin, err := os.Pipe()
	if err != nil {
		_ = script.Close()
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	cmd := bashCommand(ctx, spareLoader)
	cmd.Env = envList(env)
	cmd.Stdin = nullStdin()
	cmd.ExtraFiles = []*os.File{script, waitR}
	out := &heldWriter{}
	w := pooledCopy{out}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.WaitDelay = r.killGrace()
	group, err := taskproc.Start(cmd, r.Groups)
	_ = waitR.Close()
	if err != nil {
		stop()
		_ = begin.Close()
		_ = script.Close()
		return nil, err
	}
	return &spareShell{cmd: cmd, group: group, stop: stop, begin: begin, script: script, out: out, env: env, bash: cmd.Path}, nil
}

// discard ends a spare shell that runs no try.
func (sh *spareShell) discard() {
	_ = sh.begin.Close()
	_ = sh.group.Signal(syscall.SIGKILL)
	_ = sh.cmd.Wait()
	sh.group.Close()
	sh.stop()
	_ = sh.script.Close()
}

// run hands the shell its try, script (spareScript's), its output to out,
// SIGTERM to its group when ctx ends (release, once the shell was waited
// for, ends that). ok is false when the shell cannot take it (the spare
// is then discarded).
func (sh *spareShell) run(ctx context.Context, script string, out io.Writer) (release func(), ok bool) {
	// Another bash on PATH now, or a try already cancelled (a shell of
	// its own would not start).
	ok = sh.bash == bashPath() && ctx.Err() == nil
	if ok {
		_, err := sh.script.WriteAt([]byte(script), 0)
		ok = err == nil
	}
	if ok {
		sh.out.give(out)
		_, err := sh.begin.WriteString("\n")
		ok = err == nil // the shell died while it waited
	}
	_ = sh.begin.Close()
	_ = sh.script.Close()
	if !ok {
		sh.discard()
		return nil, false
	}
	unhook := context.AfterFunc(ctx, sh.stop)
	return func() { unhook(); sh.stop() }, true
}

// spareScript is the script that turns a shell started with environment
// from into one running command in folder cwd with environment to, as
// `bash -c command` there would; ok is false when none can.
func spareScript(from, to map[string]string, cwd, command string) (script string, ok bool) {
	if strings.IndexByte(command, 0) >= 0 {
		return "", false // bash -c refuses it (the shell reads up to a NUL)
	}
	var b strings.Builder
	b.WriteString("unset __weir_begin __weir_script; ")
	for _, k := range slices.Sorted(maps.Keys(to)) {
		if v, had := from[k]; had && v == to[k] {
			continue
		}
		if !plainShellVariable(k) {
			return "", false
		}
		b.WriteString("export " + k + "=" + shellLineQuote(to[k]) + "; ")
	}
	for _, k := range slices.Sorted(maps.Keys(from)) {
		if _, kept := to[k]; kept {
			continue
		}
		if !plainShellVariable(k) {
			return "", false
		}
		b.WriteString("unset " + k + "; ")
	}
	if cwd != "" {
		cd, ok := spareCd(from["PWD"], cwd)
		if !ok {
			return "", false
		}
		// OLDPWD stays what the shell made of it as it started (exported
		// without a value when the environment had none, or no folder).
		b.WriteString("if [[ -v OLDPWD ]]; then __weir_o=$OLDPWD; " + cd + "; OLDPWD=$__weir_o; unset __weir_o; " +
			"else " + cd + "; unset OLDPWD; declare -x OLDPWD; fi; ")
	}
	b.WriteString("SECONDS=0; ")
	b.WriteString(command)
	return b.String(), true
}

// spareCd is the command that takes a spare to folder cwd as a shell
// started there with PWD pwd in its environment finds itself: PWD kept when
// it is absolute and names that folder, else the folder as getcwd names it.
// The folder is made absolute first (a relative one is the worker's, and
// CDPATH or "-" must not change it).
func spareCd(pwd, cwd string) (string, bool) {
	dir, err := filepath.Abs(cwd)
	if err != nil {
		return "", false
	}
	if filepath.IsAbs(pwd) {
		if a, err := os.Stat(pwd); err == nil {
			if b, err := os.Stat(dir); err == nil && os.SameFile(a, b) {
				return "cd -L -- " + shellLineQuote(pwd) + " || exit 1", true
			}
		}
	}
	return "cd -P -- " + shellLineQuote(dir) + " || exit 1", true
}

// shellVariable matches the names a script can export.
var shellVariable = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// plainShellVariable reports whether bash treats variable k like any
// other when it changes after start-up: not one it reads only as it
// starts (BASH_ENV, SHELLOPTS, exported functions…), sets itself, or
// refuses to have set.
func plainShellVariable(k string) bool {
	if !shellVariable().MatchString(k) || strings.HasPrefix(k, "BASH") || strings.HasPrefix(k, "COMP_") ||
		strings.HasPrefix(k, "HIST") {
		return false
	}
	switch k {
	case "ENV", "SHELLOPTS", "POSIXLY_CORRECT", "IFS", "PS4", "SHLVL", "PWD", "OLDPWD", "UID", "EUID",
		"PPID", "GROUPS", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "SECONDS", "RANDOM", "SRANDOM",
		"LINENO", "FUNCNAME", "DIRSTACK", "PIPESTATUS", "EPOCHSECONDS", "EPOCHREALTIME", "OPTIND", "OPTERR",
		"TERM", "LINES", "COLUMNS", "MAILCHECK", "PS1", "PS2", "PROMPT_COMMAND", "INPUTRC", "SHELL",
		// ignored in the environment, acted on when assigned
		"GLOBIGNORE", "IGNOREEOF", "CHILD_MAX", "MAIL", "MAILPATH", "TERMCAP", "TERMINFO",
		"TEXTDOMAIN", "TEXTDOMAINDIR", "HOSTFILE":
		return false
	}
	return true
}

// shellLineQuote quotes s for bash on one line: $'…' when s holds a line
// break.
func shellLineQuote(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return taskproc.ShellQuote(s)
	}
	return "$'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`).Replace(s) + "'"
}

// heldWriter holds what a spare shell writes before its try (bash's own
// warnings as it starts) and passes it on, with what follows, to the
// try's output.
type heldWriter struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		if len(h.held) < 64<<10 {
			h.held = append(h.held, p...)
		}
		return len(p), nil
	}
	return h.w.Write(p)
}

func (h *heldWriter) give(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.w = w
	if len(h.held) > 0 {
		_, _ = w.Write(h.held)
		h.held = nil
	}
}
