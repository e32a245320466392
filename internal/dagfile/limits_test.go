package dagfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// Issue 13 finding 1: a file over [dag_processor] max_file_bytes is refused
// with the file and the limit named, whether it is read from disk or handed
// over in memory; a file at the limit loads.
func TestLoaderRefusesLargeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.yaml")
	big := filepath.Join(dir, "big.yaml")
	dag := "dag_id: small\ntasks:\n  - task_id: t\n    operator: noop\n"
	l := NewLoader(int64(len(dag)), time.Minute)
	if err := os.WriteFile(ok, []byte(dag), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(dag+"#"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := l.ReadFile(ok)
	if err != nil {
		t.Fatal(err)
	}
	if dags, err := l.Load(t.Context(), ok, data); err != nil || len(dags) != 1 {
		t.Fatalf("a file at the limit: %v, %v", dags, err)
	}
	want := fmt.Sprintf("over the limit of %d bytes ([dag_processor] max_file_bytes)", len(dag))
	if _, err := l.ReadFile(big); err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("%s: the file is %d bytes,", big, len(dag)+1)) ||
		!strings.Contains(err.Error(), want) {
		t.Errorf("ReadFile of a file over the limit: %v", err)
	}
	if _, err := l.Load(t.Context(), "mem.yaml", []byte(dag+"\n")); err == nil || !strings.Contains(err.Error(), "mem.yaml: ") || !strings.Contains(err.Error(), want) {
		t.Errorf("Load of data over the limit: %v", err)
	}
}

// A file whose size its stat does not tell (a named pipe) is read within
// the limit all the same: its bytes up to it load, one more is refused.
func TestLoaderBoundsAFileOfUnknownSize(t *testing.T) {
	t.Parallel()
	dag := "dag_id: piped\ntasks:\n  - task_id: t\n    operator: noop\n" + strings.Repeat("#", 2000) + "\n"
	l := NewLoader(int64(len(dag)), time.Minute)
	for _, tc := range []struct {
		name, content string
		refused       bool
	}{{"at the limit", dag, false}, {"over it", dag + "#", true}} {
		fifo := filepath.Join(t.TempDir(), "piped.yaml")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer f.Close()
			_, _ = f.WriteString(tc.content) // a refused read closes its end early
		}()
		data, err := l.ReadFile(fifo)
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(), "over the limit")):
			t.Errorf("%s: ReadFile = %d bytes, %v; want it refused", tc.name, len(data), err)
		case !tc.refused && (err != nil || string(data) != tc.content):
			t.Errorf("%s: ReadFile = %d bytes, %v; want the %d bytes", tc.name, len(data), err, len(tc.content))
		}
	}
}

// A parse past [dag_processor] dag_file_processor_timeout is an error naming
// the limit; it goes on in the background, and the next parse waits for it
// rather than running beside it.
func TestLoaderTimeBudget(t *testing.T) {
	t.Parallel()
	l := NewLoader(0, time.Millisecond)
	release := make(chan struct{})
	started := make(chan string, 2)
	l.parse = func(name string, data []byte) ([]core.DAG, error) {
		started <- name
		if name == "slow.yaml" {
			<-release // never ends on its own
		}
		return Load(name, data)
	}
	_, err := l.Load(t.Context(), "slow.yaml", []byte("x: 1"))
	if err == nil || !strings.Contains(err.Error(), "slow.yaml: parsing took longer than 1ms, the limit ([dag_processor] dag_file_processor_timeout)") {
		t.Fatalf("slow parse: %v", err)
	}
	if !Transient(err) {
		t.Error("an abandoned parse is not Transient: its error would be kept for the same bytes")
	}
	if got := <-started; got != "slow.yaml" {
		t.Fatalf("started %s", got)
	}
	l.timeout = time.Hour // the next parse is judged on its own time, not on its wait
	next := make(chan error, 1)
	go func() {
		_, err := l.Load(t.Context(), "next.yaml", []byte("dag_id: n\ntasks:\n  - task_id: t\n    operator: noop\n"))
		next <- err
	}()
	close(release)
	if got := <-started; got != "next.yaml" {
		t.Fatalf("started %s", got)
	}
	if err := <-next; err != nil {
		t.Fatalf("next parse: %v", err)
	}
}

// A panic inside the loader is an error naming the file, not a crash of the
// process.
func TestLoaderRecoversPanics(t *testing.T) {
	t.Parallel()
	l := NewLoader(0, 0)
	l.parse = func(string, []byte) ([]core.DAG, error) { panic("boom") }
	_, err := l.Load(t.Context(), "p.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "p.yaml: the DAG file loader failed") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("panic: %v", err)
	}
	if !Transient(err) {
		t.Error("a loader panic is not Transient")
	}
	l.parse = Load // the slot was released
	if _, err := l.Load(t.Context(), "ok.yaml", []byte("# empty\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(t.Context(), "bad.yaml", []byte("dag_id: [")); err == nil || Transient(err) {
		t.Errorf("a syntax error: %v, Transient %v; want an error that is not", err, Transient(err))
	}
}
