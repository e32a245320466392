package weir

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/testutil/pgtest"
)

// TestExampleProgram builds examples/sdk with `go build` and runs the binary
// as a user would: `dags test` of each example DAG, and `standalone`
// serving the Go DAGs next to the YAML DAGs of examples/dags.
func TestSDKProgramEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "sdk")
	build := exec.Command("go", "build", "-o", bin, "./examples/sdk")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/sdk: %v\n%s", err, out)
	}

	t.Run("dags test go_etl", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		rows := dagsTest(t, bin, home, "go_etl")
		want := map[string]string{"extract": "success 1", "transform[0]": "success 1", "transform[1]": "success 1",
			"transform[2]": "success 1", "load": "success 1"}
		assertRows(t, rows, want)
		// load summed the mapped squares 1 + 4 + 9.
		if v := returnValue(t, openStore(t, home), "go_etl", "load", -1); v != "14" {
			t.Errorf("load returned %s, want 14", v)
		}
	})
	t.Run("dags test go_retries", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		assertRows(t, dagsTest(t, bin, home, "go_retries"), map[string]string{"flaky": "success 2"})
		if v := returnValue(t, openStore(t, home), "go_retries", "flaky", -1); v != `"succeeded on try 2"` {
			t.Errorf("flaky returned %s", v)
		}
	})
	t.Run("dags test go_mixed", func(t *testing.T) {
		t.Parallel()
		assertRows(t, dagsTest(t, bin, t.TempDir(), "go_mixed"),
			map[string]string{"greet": "success 1", "echo": "success 1", "publish": "skipped 1"})
		assertRows(t, dagsTest(t, bin, t.TempDir(), "go_mixed", "--conf", `{"publish": true}`),
			map[string]string{"publish": "success 1"})
	})
	t.Run("in-task weir CLI under an SDK binary", func(t *testing.T) {
		t.Parallel()
		// mapping.yaml's bash task runs `weir xcom push`: the worker puts a
		// `weir` linked to this program first on the task's PATH.
		assertRows(t, dagsTest(t, bin, t.TempDir(), "mapping", "--dags", "examples/dags"),
			map[string]string{"make_list": "success 1", "square[2]": "success 1"})
	})
	t.Run("dags test go_stream_pages", func(t *testing.T) {
		t.Parallel()
		home := t.TempDir()
		conf := `{"db": "` + filepath.Join(home, "pages.db") + `"}`
		rows := dagsTest(t, bin, home, "go_stream_pages", "--conf", conf)
		assertRows(t, rows, map[string]string{"fetch": "success 1", "insert[0]": "success 1", "insert[19]": "success 1",
			"report": "success 1", "load": "success 1"})
		st := openStore(t, home)
		// 20 pages of 5 orders: every one inserted by the mapped inserts,
		// and every page handled once by the streaming operator.
		if v := returnValue(t, st, "go_stream_pages", "report", -1); v != "100" {
			t.Errorf("report counted %s orders, want 100", v)
		}
		if v := returnValue(t, st, "go_stream_pages", "load", -1); !strings.Contains(v, `"handled":20`) {
			t.Errorf("load returned %s, want 20 pages handled", v)
		}
	})
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		standalone(t, bin)
	})
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run("go callbacks start go_ops_responder on "+engine, func(t *testing.T) {
			t.Parallel()
			goOpsCallbacks(t, bin, engine) // callback_example_test.go
		})
		t.Run("go_emit_batches starts a go_batches_consumer run per batch on "+engine, func(t *testing.T) {
			t.Parallel()
			goBatchPipeline(t, bin, engine) // batches_example_test.go
		})
		t.Run("go_stream_batches retries a failed batch from its first event on "+engine, func(t *testing.T) {
			t.Parallel()
			goStreamBatches(t, bin, engine) // streambatch_example_test.go
		})
	}
	// The seeds' task-state patterns in Go (sdk_patterns_test.go).
	for name, fn := range map[string]func(*testing.T, string){
		"go_checkpoint_resume resumes from its checkpoint":         goCheckpointResume,
		"go_progress_report is readable while running":             goProgressReport,
		"go_resume_external_job reconnects after a worker SIGKILL": goResumeAfterKill,
		"go_watermark_load processes only new rows":                goWatermarkLoad, // assetstate_example_test.go
		"go_deferral defers and resumes":                           goDeferral,      // deferral_example_test.go
		"go_custom_trigger waits on a custom trigger type":         goCustomTrigger,
		"a dags test interrupted or killed ends its run":           dagsTestStops, // dagstest_stop_test.go
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, bin)
		})
	}
}

// dagsTest runs `bin dags test dagID` and returns its task table as
// "task" or "task[map_index]" → "state try".
func dagsTest(t *testing.T, bin, home, dagID string, extra ...string) map[string]string {
	t.Helper()
	return dagsTestEnv(t, bin, home, nil, dagID, extra...)
}

// dagsTestEnv is dagsTest with env added to the command's environment.
func dagsTestEnv(t *testing.T, bin, home string, env []string, dagID string, extra ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"dags", "test", dagID, "--home", home}, extra...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s dags test %s: %v\nstdout:\n%s\nstderr:\n%s", bin, dagID, err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "of "+dagID+": success") {
		t.Errorf("run not reported successful:\n%s", stdout.String())
	}
	rows := map[string]string{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] == "TASK_ID" {
			continue
		}
		key := f[0]
		if f[1] != "-1" {
			key += "[" + f[1] + "]"
		}
		rows[key] = f[2] + " " + f[3]
	}
	return rows
}

func assertRows(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("task %s: %q, want %q (table: %v)", k, got[k], w, got)
		}
	}
}

// unpausedNew lets the tests trigger the DAGs they load without unpausing
// them first (new DAGs start paused by default, as in Airflow).
const unpausedNew = "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false"

// startStandalone starts `bin standalone` with env added to its
// environment, logs in, and returns the API's URL, a logged-in client and
// standalone's stderr; it stops standalone when t ends.
func startStandalone(t *testing.T, bin string, env ...string) (string, *http.Client, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "standalone", "--home", t.TempDir(), "--dags", "examples/dags", "--port", "0")
	cmd.Env = append(append(os.Environ(), unpausedNew), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("standalone did not stop cleanly: %v\n%s", err, stderr.String())
		}
	})
	api, password := readBanner(t, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	call(t, c, http.MethodPost, api+"/auth/login", fmt.Sprintf(`{"username":"admin","password":%q}`, password), nil)
	return api, c, &stderr
}

// engineEnv is what points `bin standalone` or `bin dags test` at engine:
// nothing for sqlite, a fresh database for postgres.
func engineEnv(t *testing.T, engine string) []string {
	if engine == "postgres" {
		return []string{"WEIR__DATABASE__CONN=" + pgtest.DSN(t)}
	}
	return nil
}

// standaloneServing starts `bin standalone` on engine (startStandalone),
// waits until it serves each of dags and unpauses them; ctx bounds the
// waits.
func standaloneServing(ctx context.Context, t *testing.T, bin, engine string, dags ...string) (string, *http.Client, *bytes.Buffer) {
	t.Helper()
	api, c, stderr := startStandalone(t, bin, engineEnv(t, engine)...)
	for _, d := range dags {
		poll(ctx, t, "dag "+d, func() bool {
			resp, err := c.Get(api + "/dags/" + d)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		call(t, c, http.MethodPatch, api+"/dags/"+d, `{"is_paused": false}`, nil)
	}
	return api, c, stderr
}

// standalone starts `bin standalone`, checks that the Go and YAML DAGs are
// served, triggers go_etl through the API and waits for success.
func standalone(t *testing.T, bin string) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	api, c, stderr := startStandalone(t, bin)

	want := []string{"go_etl", "go_retries", "go_mixed", "hello"}
	poll(ctx, t, "DAGs "+strings.Join(want, ", "), func() bool {
		var resp struct {
			Dags []struct {
				DagID   string `json:"dag_id"`
				FileLoc string `json:"fileloc"`
			} `json:"dags"`
		}
		call(t, c, http.MethodGet, api+"/dags?limit=100", "", &resp)
		var ids []string
		for _, d := range resp.Dags {
			ids = append(ids, d.DagID)
			if strings.HasPrefix(d.DagID, "go_") && d.FileLoc != "go:sdk" {
				t.Errorf("dag %s fileloc %q, want go:sdk", d.DagID, d.FileLoc)
			}
		}
		return !slices.ContainsFunc(want, func(id string) bool { return !slices.Contains(ids, id) })
	})
	call(t, c, http.MethodPatch, api+"/dags/go_etl", `{"is_paused": false}`, nil)
	var run struct {
		RunID string `json:"dag_run_id"`
	}
	call(t, c, http.MethodPost, api+"/dags/go_etl/dagRuns", `{}`, &run)
	poll(ctx, t, "go_etl run "+run.RunID+" to succeed", func() bool {
		var r struct {
			State string `json:"state"`
		}
		call(t, c, http.MethodGet, api+"/dags/go_etl/dagRuns/"+run.RunID, "", &r)
		if r.State == "failed" {
			t.Fatalf("go_etl run failed under standalone\n%s", stderr.String())
		}
		return r.State == "success"
	})
}

// readBanner reads standalone's banner up to its API URL and admin password.
func readBanner(t *testing.T, out io.Reader) (api, password string) {
	t.Helper()
	sc := bufio.NewScanner(out)
	for sc.Scan() && (api == "" || password == "") {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "API:"); ok {
			api = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "login:"); ok {
			_, password, _ = strings.Cut(strings.TrimSpace(v), " / ")
		}
	}
	if api == "" || password == "" {
		t.Fatalf("standalone printed no API URL and login (scan error: %v)", sc.Err())
	}
	return api, password
}

// call sends a JSON request and decodes the JSON response into out.
func call(t *testing.T, c *http.Client, method, url, body string, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s\n%s", method, url, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, b, err)
		}
	}
}

// poll calls cond every 100 ms until it holds or ctx ends.
func poll(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
