package operator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/proctest"
	"github.com/weirflow/weir/internal/testutil/wait"
)

// logBuf is a concurrency-safe log.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func bashReq(cmd string, extra map[string]any) (*Request, *logBuf) {
	args := map[string]any{"bash_command": cmd}
	for k, v := range extra {
		args[k] = v
	}
	log := &logBuf{}
	return &Request{
		TI:   core.TaskInstance{DagID: "d", RunID: "r", TaskID: "t", MapIndex: -1, TryNumber: 1},
		Task: core.Task{TaskID: "t", Operator: Bash, Env: map[string]string{"TASK_VAR": "from-task"}},
		Args: args, Log: log,
		Env: []string{"WEIR_TI_ID=ti-1", "WEIR_TASK_TOKEN=tok"},
	}, log
}

func TestBashExitCodesAndXCom(t *testing.T) {
	t.Parallel()
	r := &Runner{}
	ctx := context.Background()
	for _, tc := range []struct {
		cmd     string
		args    map[string]any
		wantErr string
		skipped bool
		value   string
	}{
		{cmd: "echo one; echo two", args: map[string]any{"do_xcom_push": true}, value: `"two"`},
		{cmd: "echo one; echo two"},
		{cmd: "echo out; echo err >&2; exit 3", wantErr: "exit code 3"},
		{cmd: "exit 99", skipped: true},
		{cmd: "exit 5", args: map[string]any{"skip_on_exit_code": 5.0}, skipped: true},
	} {
		req, log := bashReq(tc.cmd, tc.args)
		res, err := r.Run(ctx, req)
		switch {
		case tc.skipped:
			if !errors.Is(err, ErrSkipped) {
				t.Errorf("%q: err = %v, want skipped", tc.cmd, err)
			}
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(log.String(), "err\n") {
				t.Errorf("%q: err = %v, log %q", tc.cmd, err, log.String())
			}
		default:
			if err != nil || string(res.ReturnValue) != tc.value {
				t.Errorf("%q: value %q, err %v", tc.cmd, res.ReturnValue, err)
			}
		}
	}
}

// stdout and stderr reach the log in the order the command wrote them (one
// pipe, as Airflow's stderr=STDOUT), and the last line of both is the
// return value, as in Airflow.
func TestBashOutputKeepsItsOrder(t *testing.T) {
	t.Parallel()
	var cmd, want strings.Builder
	for i := range 200 {
		stream := []string{"", " >&2"}[i%2]
		cmd.WriteString("echo line" + strconv.Itoa(i) + stream + "; ")
		want.WriteString("line" + strconv.Itoa(i) + "\n")
	}
	req, log := bashReq(cmd.String()+"echo last >&2", map[string]any{"do_xcom_push": true})
	res, err := (&Runner{}).Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Weir's own lines ("started bash ...") may come between the command's
	// first lines: the command writes as soon as it starts.
	var output strings.Builder
	for _, l := range strings.SplitAfter(log.String(), "\n") {
		if !strings.HasPrefix(l, "[") {
			output.WriteString(l)
		}
	}
	if output.String() != want.String()+"last\n" {
		t.Errorf("the log does not hold the command's 201 lines in the order written:\n%s", log.String())
	}
	if string(res.ReturnValue) != `"last"` {
		t.Errorf("return value %s, want the last line written, to stderr: \"last\"", res.ReturnValue)
	}
}

// Output whose last line has no line break ends that line in the log:
// weir's next line starts a line of its own.
func TestBashUnterminatedOutputEndsItsLine(t *testing.T) {
	t.Parallel()
	req, log := bashReq("printf 'no newline at end'", map[string]any{"do_xcom_push": true})
	res, err := (&Runner{}).Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "no newline at end\n[") || string(res.ReturnValue) != `"no newline at end"` {
		t.Errorf("log %q, return value %s; want the output's line ended before weir's", log.String(), res.ReturnValue)
	}
}

func TestBashEnv(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "weir"), []byte("#!/bin/sh\necho fake-weir \"$@\"\n"), 0o700); err != nil { //nolint:gosec // test script
		t.Fatal(err)
	}
	r := &Runner{PathDir: bin, BaseEnv: []string{"PATH=/usr/bin:/bin", "WORKER_VAR=w"}}
	req, log := bashReq(`echo "$WORKER_VAR $TASK_VAR $ARG_VAR $WEIR_TI_ID"; weir xcom push k v`,
		map[string]any{"env": map[string]any{"ARG_VAR": "from-arg"}})
	if _, err := r.Run(context.Background(), req); err != nil {
		t.Fatal(err, log.String())
	}
	if out := log.String(); !strings.Contains(out, "w from-task from-arg ti-1\n") || !strings.Contains(out, "fake-weir xcom push k v") {
		t.Fatalf("log = %q", out)
	}
}

func TestBashCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The child ignores SIGTERM, so only the group SIGKILL after the grace ends it.
	req, _ := bashReq(`trap "" TERM; (trap "" TERM; exec sleep 300) & echo $! > `+pidFile+`; wait`, nil)
	r := &Runner{KillGrace: 50 * time.Millisecond}
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx, req); done <- err }()
	var pid int
	wait.Until(t, 20*time.Second, "child pid file", func() bool { var ok bool; pid, ok = proctest.ReadPID(pidFile); return ok })
	cancel(ErrTimeout)
	err := <-done
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	wait.Until(t, 20*time.Second, "child sleep to die", func() bool { return !proctest.Alive(pid) })
}

func TestRedactorMasksSecretsAcrossWrites(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	rd := NewRedactor(&out, "tok-secret")
	rd.Add("hunter2")
	_, _ = rd.Write([]byte("token=tok-sec"))
	_, _ = rd.Write([]byte("ret password hunter2\nlast hun"))
	_, _ = rd.Write([]byte("ter2"))
	_ = rd.Flush()
	if got, want := out.String(), "token=*** password ***\nlast ***"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A task's last line without its newline gets one, masked, before the
// worker's own line; a complete last line gets none.
func TestRedactorEndLine(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	rd := NewRedactor(&out, "hunter2")
	_, _ = rd.Write([]byte("done\nprogress 50% hunter2"))
	_ = rd.EndLine()
	_, _ = rd.Write([]byte("[ts] weir: try ended\n"))
	_ = rd.EndLine()
	if got, want := out.String(), "done\nprogress 50% ***\n[ts] weir: try ended\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// A last line longer than the hold was written already, unended.
	out.Reset()
	long := strings.Repeat("x", redactHold+10)
	_, _ = rd.Write([]byte(long))
	_ = rd.EndLine()
	_, _ = rd.Write([]byte("next\n"))
	if got := out.String(); got != long+"\nnext\n" {
		t.Fatalf("a long unended line then a line: got ...%q, want the long line ended", got[max(0, len(got)-20):])
	}
}

func TestBashTokenRedactedInLog(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	rd := NewRedactor(&out, "tok-secret-value")
	req, _ := bashReq(`echo "token is $WEIR_TASK_TOKEN"`, nil)
	req.Env = []string{"WEIR_TASK_TOKEN=tok-secret-value"}
	req.Log = rd
	if _, err := (&Runner{}).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_ = rd.Flush()
	if s := out.String(); strings.Contains(s, "tok-secret-value") || !strings.Contains(s, "token is ***") {
		t.Fatalf("log = %q", s)
	}
}
