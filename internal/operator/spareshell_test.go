package operator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/proctest"
	"github.com/weirflow/weir/internal/testutil/wait"
)

const spareLogLine = "bash started ahead (a spare shell)"

// spareReady waits until r holds a spare shell and returns its pid.
func spareReady(t *testing.T, r *Runner) int {
	t.Helper()
	var pid int
	wait.Until(t, 20*time.Second, "a spare shell", func() bool {
		r.spares.mu.Lock()
		defer r.spares.mu.Unlock()
		if len(r.spares.ready) > 0 {
			pid = r.spares.ready[0].cmd.Process.Pid
		}
		return pid != 0
	})
	return pid
}

// warmUp runs the try after which r makes spare shells.
func warmUp(t *testing.T, r *Runner) {
	t.Helper()
	runWith(t, r, "true", nil)
}

// runWith runs cmd (args as bashReq's extra) on r and returns the log
// without weir's own lines, the return value, the error's text with what
// the shell left in its ledger, and whether a spare shell ran it.
func runWith(t *testing.T, r *Runner, cmd string, args map[string]any) (log, value, errText string, spared bool) {
	t.Helper()
	req, buf := bashReq(cmd, args)
	req.Args["do_xcom_push"] = true
	o := pendingExit(t, t.TempDir())
	req.ExitTrap = o.ExitTrap()
	res, err := r.Run(context.Background(), req)
	if err != nil {
		errText = err.Error()
	} else {
		value = string(res.ReturnValue)
	}
	status, ok := o.ExitStatus()
	errText += fmt.Sprintf(" (exit status left: %d, %t)", status, ok)
	spared = strings.Contains(buf.String(), spareLogLine)
	var kept []string
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if !strings.Contains(l, "started bash, pid") && !strings.Contains(l, spareLogLine) &&
			!strings.Contains(l, "bash command exited with code") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, ""), value, errText, spared
}

// envWith is env without the variables unset, and with set.
func envWith(env []string, set map[string]string, unset ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, replaced := set[k]; !replaced && !slices.Contains(unset, k) {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// A command run in a spare shell sees what it sees in a shell of its own:
// variables (the try's, the task's, the worker's, bash's own), folder,
// options, traps, file descriptors, its process and group, and ends the
// same way. A try whose variables a spare cannot take on, or a worker
// whose environment bash acts on as it starts, runs in a shell of its own.
func TestASpareShellRunsWhatAShellOfItsOwnRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	bashEnv := filepath.Join(t.TempDir(), "bash_env")
	if err := os.WriteFile(bashEnv, []byte("echo sourced in $PWD with X=$X\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := envWith(os.Environ(), map[string]string{"WORKER_ONLY": "w", "OVERRIDDEN": "worker",
		"LC_ALL": "xx_XX.UTF-8", "OLDPWD": os.TempDir()})
	const probe = `env | grep -v '^_=' | sort
echo "line $LINENO, \$0=$0, SHLVL=$SHLVL, seconds<=1: $(( SECONDS <= 1 )), PWD=$PWD, pwd=$(pwd)"
declare -p OLDPWD 2>&1 || :
umask; trap -p; set +o; shopt -p
echo "pid==group leader: $(( $$ == $(ps -o pgid= $$) ))"
for f in /proc/$$/fd/*; do l=$(readlink "$f") && echo "fd ${f##*/} -> ${l%%:*}"; done
readlink /proc/$$/fd/0
echo last`
	const globs = `cd "$(mktemp -d)" && touch .hidden seen ignored && echo * && set -o | grep ignoreeof`
	for _, tc := range []struct {
		name     string
		cmd      string
		args     map[string]any
		base     []string // the worker's environment (nil: base)
		own      bool     // the try starts a shell of its own
		noSpares bool     // the worker makes no spares
	}{
		{name: "probe", cmd: probe, args: map[string]any{"env": map[string]any{"OVERRIDDEN": "task's", "QUOTED": "it's \"x\"\n$HOME\\\r"}}},
		{name: "probe in a folder", cmd: probe, args: map[string]any{"cwd": dir}},
		{name: "probe in a linked folder", cmd: probe, args: map[string]any{"cwd": link}},
		{name: "probe in a relative folder", cmd: probe, args: map[string]any{"cwd": "..", "env": map[string]any{"CDPATH": os.TempDir()}}},
		{name: "probe in a folder, no OLDPWD", cmd: probe, args: map[string]any{"cwd": dir}, base: envWith(base, nil, "OLDPWD")},
		{name: "probe in a folder, OLDPWD no folder", cmd: probe, args: map[string]any{"cwd": dir},
			base: envWith(base, map[string]string{"OLDPWD": "/no/such/folder"})},
		{name: "probe in the folder PWD links to", cmd: probe, args: map[string]any{"cwd": dir},
			base: envWith(base, map[string]string{"PWD": link})},
		{name: "exit code", cmd: "echo out; echo err >&2; exit 3"},
		{name: "skip", cmd: "exit 99"},
		{name: "set -e", cmd: "set -e\nfalse\necho not reached"},
		{name: "own exit trap", cmd: "trap 'echo bye' EXIT; echo hi"},
		{name: "command not found", cmd: "no-such-command-here"},
		{name: "stdin", cmd: "cat; echo read $?"},
		{name: "GLOBIGNORE and IGNOREEOF", cmd: globs, args: map[string]any{"env": map[string]any{"GLOBIGNORE": "ignored", "IGNOREEOF": "3"}}, own: true},
		{name: "BASH_ENV in the worker's environment", cmd: "echo X=$X", args: map[string]any{"cwd": dir, "env": map[string]any{"X": "try's"}},
			base: envWith(base, map[string]string{"BASH_ENV": bashEnv}), own: true, noSpares: true},
		{name: "options in the worker's environment", cmd: "echo /*; shopt extglob", base: envWith(base,
			map[string]string{"SHELLOPTS": "noglob", "BASHOPTS": "extglob"}), own: true, noSpares: true}, // xtrace would print the try's variables
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := base
			if tc.base != nil {
				env = tc.base
			}
			own := &Runner{BaseEnv: env}
			spare := &Runner{BaseEnv: env, SpareShell: true}
			defer spare.Close()
			warmUp(t, spare) // has the spares made
			if tc.noSpares {
				wait.Until(t, 20*time.Second, "the spares refused", func() bool {
					spare.spares.mu.Lock()
					defer spare.spares.mu.Unlock()
					return spare.spares.refused && !spare.spares.making && len(spare.spares.ready) == 0
				})
			} else {
				spareReady(t, spare)
			}
			wantLog, wantValue, wantErr, _ := runWith(t, own, tc.cmd, tc.args)
			log, value, errText, spared := runWith(t, spare, tc.cmd, tc.args)
			if spared == tc.own {
				t.Errorf("ran in a spare shell: %v, want %v", spared, !tc.own)
			}
			if log != wantLog || value != wantValue || errText != wantErr {
				t.Errorf("in a spare shell:\nlog %s\nvalue %s err %q\nin a shell of its own:\nlog %s\nvalue %s err %q",
					log, value, errText, wantLog, wantValue, wantErr)
			}
		})
	}
}

// Spares are made from a worker's first bash try on (its bash tries are
// not known ahead); the spare shell actually runs the try, and is made
// again for the next.
func TestASpareShellRunsTheNextTry(t *testing.T) {
	t.Parallel()
	r := &Runner{SpareShell: true}
	defer r.Close()
	req, log := bashReq("echo first", nil)
	if _, err := r.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), spareLogLine) {
		t.Fatalf("the first try found a spare: %s", log)
	}
	for i := range 3 {
		pid := spareReady(t, r)
		if i == 0 {
			time.Sleep(1100 * time.Millisecond) // $SECONDS counts from the try, not from the spare's start
		}
		req, log := bashReq("echo $$ $SECONDS", map[string]any{"do_xcom_push": true})
		res, err := r.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), spareLogLine) || string(res.ReturnValue) != `"`+strconv.Itoa(pid)+` 0"` {
			t.Fatalf("try %d ran in pid and $SECONDS %s, the spare was %d: %s", i, res.ReturnValue, pid, log)
		}
	}
}

// A spare warmed for the bash tries known to come runs the first try,
// even one that begins before the spare is made (it waits for it); no
// more spares are made than the rest of those tries need: none after a
// one-task test's. Spares off, none is made.
func TestAWarmedSpareRunsTheFirstTry(t *testing.T) {
	t.Parallel()
	off := &Runner{}
	defer off.Close()
	off.WarmSpare(1)
	if off.spares.making || len(off.spares.ready) > 0 {
		t.Fatal("a runner with spares off warmed one")
	}
	none := &Runner{SpareShell: true}
	defer none.Close()
	none.WarmSpare(0)
	if none.spares.making || len(none.spares.ready) > 0 {
		t.Fatal("a spare was warmed for no bash try")
	}
	for _, tries := range []int{1, 2} {
		r := &Runner{SpareShell: true}
		defer r.Close()
		r.WarmSpare(tries)
		r.WarmSpare(tries) // one is being made: no second
		req, log := bashReq("echo $$", map[string]any{"do_xcom_push": true})
		res, err := r.Run(context.Background(), req)
		if err != nil || !strings.Contains(log.String(), spareLogLine) {
			t.Fatalf("%d tries, the first: err %v, log %s; want it in the warmed spare", tries, err, log)
		}
		if !strings.Contains(log.String(), "pid "+strings.Trim(string(res.ReturnValue), `"`)+",") {
			t.Errorf("%d tries: the command's $$ %s is not the spare's pid: %s", tries, res.ReturnValue, log)
		}
		if tries == 1 && sparesMadeSoon(r) {
			t.Error("the warmed spare's take made another for a one-task test (it would be wasted)")
		}
		if tries == 2 {
			spareReady(t, r) // for the second try
			time.Sleep(200 * time.Millisecond)
			r.spares.mu.Lock()
			held, making := len(r.spares.ready), r.spares.making
			r.spares.mu.Unlock()
			if held != 1 || making {
				t.Errorf("two tries known: %d spares after the first (making one: %v), want 1", held, making)
			}
		}
	}
}

// sparesMadeSoon says whether r holds or makes a spare 200 ms from now.
func sparesMadeSoon(r *Runner) bool {
	time.Sleep(200 * time.Millisecond)
	r.spares.mu.Lock()
	defer r.spares.mu.Unlock()
	return len(r.spares.ready) > 0 || r.spares.making
}

// A try whose variables bash reads only as it starts starts a shell of its
// own, and leaves the spare for the next; a cwd that is not a folder fails
// the try, naming it.
func TestATryBashMustStartItselfSkipsTheSpare(t *testing.T) {
	t.Parallel()
	r := &Runner{SpareShell: true}
	defer r.Close()
	warmUp(t, r)
	pid := spareReady(t, r)
	for _, args := range []map[string]any{
		{"env": map[string]any{"BASH_ENV": "/dev/null"}},
		{"env": map[string]any{"SHELLOPTS": "errexit"}},
		{"cwd": "/no/such/folder"},
		{"cwd": "/etc/hostname"},
	} {
		req, log := bashReq("echo ran", args)
		_, err := r.Run(context.Background(), req)
		if strings.Contains(log.String(), spareLogLine) {
			t.Errorf("%v ran in the spare: %s", args, log)
		}
		if cwd, _ := args["cwd"].(string); cwd != "" && (err == nil || !strings.Contains(err.Error(), strconv.Quote(cwd)+" is not a folder")) {
			t.Errorf("missing folder: err = %v", err)
		}
		if args["cwd"] == nil && (err != nil || !strings.Contains(log.String(), "ran\n")) {
			t.Errorf("%v: err = %v, log %s", args, err, log)
		}
	}
	if spareReady(t, r) != pid {
		t.Error("a try that could not use the spare threw it away")
	}
}

// A cancelled try's spare shell gets SIGTERM, as a shell of its own does,
// and nothing of its group outlives the try.
func TestACancelledTryInASpareShellIsKilled(t *testing.T) {
	t.Parallel()
	r := &Runner{SpareShell: true, KillGrace: time.Second}
	defer r.Close()
	warmUp(t, r)
	spareReady(t, r)
	pidFile := filepath.Join(t.TempDir(), "pid")
	req, log := bashReq("trap 'echo got TERM; exit 7' TERM; sleep 60 & echo $! > "+pidFile+"; wait", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx, req); done <- err }()
	var child int
	wait.Until(t, 20*time.Second, "the background sleep", func() bool { var ok bool; child, ok = proctest.ReadPID(pidFile); return ok })
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(log.String(), "got TERM") {
			t.Fatalf("err = %v, log %s", err, log)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled try did not end")
	}
	if !strings.Contains(log.String(), spareLogLine) {
		t.Fatalf("not run in the spare: %s", log)
	}
	wait.Until(t, 20*time.Second, "the background sleep to die", func() bool { return !proctest.Alive(child) })
}

// A spare shell someone killed is not used: the try starts its own. Close
// leaves no spare running.
func TestADeadSpareIsReplacedAndCloseEndsTheSpare(t *testing.T) {
	t.Parallel()
	r := &Runner{SpareShell: true}
	warmUp(t, r)
	pid := spareReady(t, r)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 20*time.Second, "the spare to die", func() bool { return !proctest.Alive(pid) })
	log, value, errText, _ := runWith(t, r, "echo fine", nil)
	if errText != " (exit status left: 0, true)" || value != `"fine"` {
		t.Fatalf("after the spare died: err %q, value %s, log %s", errText, value, log)
	}
	spareReady(t, r)
	r.spares.mu.Lock()
	var pids []int
	for _, sh := range r.spares.ready {
		pids = append(pids, sh.cmd.Process.Pid)
	}
	r.spares.mu.Unlock()
	r.Close()
	for _, pid := range pids {
		if proctest.Alive(pid) {
			t.Errorf("spare %d outlived Close", pid)
		}
	}
	r.spares.mu.Lock()
	defer r.spares.mu.Unlock()
	if len(r.spares.ready) > 0 || r.spares.making {
		t.Fatal("a spare was made after Close")
	}
}

// No spare is made while as many bash tries run as the machine has cores
// (its start would take the CPU from them); one is once fewer run.
func TestNoSpareIsMadeWhileTheCoresAreBusy(t *testing.T) {
	t.Parallel()
	r := &Runner{SpareShell: true}
	defer r.Close()
	r.spares.mu.Lock()
	r.spares.running = busyTries() - 1 // this many others run; the next try makes the cores busy
	r.spares.mu.Unlock()
	warmUp(t, r)
	time.Sleep(300 * time.Millisecond)
	r.spares.mu.Lock()
	made := len(r.spares.ready) > 0 || r.spares.making
	r.spares.running = 0
	r.spares.mu.Unlock()
	if made {
		t.Fatal("a spare was made while the cores were busy")
	}
	warmUp(t, r)
	spareReady(t, r)
}

// A task's shell, its own or a spare one, inherits the worker's
// environment less what configures or authenticates Weir: the worker's
// credential, WEIR__ configuration (a DSN, signing keys) and WEIR_CONN_
// connections (TaskEnviron).
func TestTasksGetNoneOfWeirsSecrets(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/usr/bin:/bin", "WORKER_VAR=kept", "WEIR_HOME=/srv/weir",
		"WEIR_WORKER_TOKEN=worker-credential", "WEIR__DATABASE__CONN=postgres://weir:pw@db/weir",
		"WEIR__API_AUTH__JWT_SECRET=signing-key", "WEIR_CONN_WAREHOUSE=postgres://svc:pw@wh/dw"}
	cmd := `echo "vars: $WORKER_VAR $WEIR_HOME"; env | grep -E '^WEIR_(WORKER_TOKEN|_|CONN_)' | sort; echo end`
	const want = "vars: kept /srv/weir\nend\n"
	own := &Runner{BaseEnv: env}
	if log, _, _, _ := runWith(t, own, cmd, nil); log != want {
		t.Errorf("a shell of its own printed %q, want %q", log, want)
	}
	spare := &Runner{BaseEnv: env, SpareShell: true}
	defer spare.Close()
	warmUp(t, spare)
	spareReady(t, spare)
	if log, _, _, spared := runWith(t, spare, cmd, nil); !spared || log != want {
		t.Errorf("a spare shell (ran in one: %v) printed %q, want %q", spared, log, want)
	}
}
