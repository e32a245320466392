package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/testutil/lbtest"
	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// TestPostgresRestart restarts PostgreSQL (an immediate shutdown, as a
// crash of the database) three times at random moments under api-server,
// scheduler and worker processes.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	db := pgtest.Private(t)
	d := deploy(t, "postgres restart", deploymentOptions{postgres: db.DSN()})
	defer d.finish()
	for range 3 {
		d.keepRunning(3)
		d.snapshot()
		d.pause(200*time.Millisecond, 2*time.Second)
		db.Restart(t)
		d.fig.faults++
	}
	d.check()
}

// TestDiskFull fills the disk under standalone's SQLite database (its home
// on a small tmpfs) twice while runs go on, for a few seconds each time,
// then frees it.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	home := mountTmpfs(t, "96m")
	d := deploy(t, "disk full (sqlite)", deploymentOptions{home: home})
	defer d.finish()
	for range 2 {
		d.keepRunning(3)
		d.snapshot()
		d.pause(200*time.Millisecond, 1500*time.Millisecond)
		free := fillDisk(t, home)
		d.fig.faults++
		d.pause(2*time.Second, 4*time.Second)
		free()
		if p := d.procs[standalone.name]; p.Exited() {
			d.t.Errorf("%s: anomaly: standalone exited while the disk was full:\n%s", d.scenario, p.Output())
			d.fig.anomalies++
			d.start(standalone)
		}
	}
	d.check()
}

// mountTmpfs mounts a tmpfs of size on a new folder until t ends. Where
// mounting is impossible (not root, no mount) it skips t, except in CI
// (WEIR_REQUIRE_POSTGRES=1), which must run every fault.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("cannot mount a tmpfs for the disk-full fault (needs root): %v: %s", err, out)
		if os.Getenv(pgtest.EnvRequire) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk writes a file into dir until its filesystem is full and returns
// a function that removes it.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for {
		if _, err = f.Write(chunk); err != nil {
			break
		}
	}
	_ = f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("fill %s: %v, want ENOSPC", dir, err)
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWorkerCutOffFromAPI makes the API server unreachable from the worker
// for -chaos.outage (30 s) while its tasks run: tries that finish meanwhile
// must be reported once the API is back, not run again. The heartbeat
// timeout and two worker heartbeat intervals are longer than the outage,
// so no try is failed for it (a worker cut off for longer than two of its
// heartbeat intervals counts as dead, docs/state-machines.md#dead-workers).
func TestWorkerCutOffFromAPI(t *testing.T) {
	t.Parallel()
	var px *lbtest.LB
	d := deploy(t, "api unreachable", deploymentOptions{postgres: pgtest.DSN(t),
		env: []string{"WEIR__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT=" + (2 * *outageFlag).String(),
			"WEIR__WORKERS__HEARTBEAT_INTERVAL=" + outageFlag.String()},
		workerURL: func(base string) string {
			px = lbtest.Start(t, base)
			return px.URL()
		}})
	defer d.finish()
	d.keepRunning(3)
	weirtest.WaitFor(t, "a task to run", func() (bool, string) {
		for _, ti := range d.api.TaskInstances(dagID, d.runs[0]) {
			if ti.State == core.TIRunning {
				return true, ""
			}
		}
		return false, "none running"
	})
	d.snapshot()
	px.SetCut(true)
	d.fig.faults++
	time.Sleep(*outageFlag) // the fault lasts this long
	px.SetCut(false)
	d.check()
}
