package weir_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/testutil/pgtest"
	"github.com/weirflow/weir/internal/testutil/weirtest"
)

// journalProgram registers the custom state backend "journal": each value
// is a file under $JOURNAL_DIR/objects, and each call is a line "op ref"
// in $JOURNAL_DIR/calls. Its DAG writes and reads task state from a Go
// task (and deletes a key) and from a bash task through `weir task-state`.
const journalProgram = `package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weirflow/weir"
)

type journal struct{ dir string }

func (j journal) log(op, ref string) error {
	f, err := os.OpenFile(filepath.Join(j.dir, "calls"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s %s\n", op, ref)
	return err
}

func (j journal) path(ref string) string {
	return filepath.Join(j.dir, "objects", strings.ReplaceAll(ref, "/", "#"))
}

func (j journal) Serialize(ctx context.Context, ref string, value []byte) error {
	if err := j.log("serialize", ref); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(j.dir, "objects"), 0o700); err != nil {
		return err
	}
	return os.WriteFile(j.path(ref), value, 0o600)
}

func (j journal) Deserialize(ctx context.Context, ref string) ([]byte, error) {
	if err := j.log("deserialize", ref); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(j.path(ref))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("journal has no %s: %w", ref, weir.ErrNotFound)
	}
	return data, err
}

func (j journal) Cleanup(ctx context.Context, ref string) error {
	if err := j.log("cleanup", ref); err != nil {
		return err
	}
	if err := os.Remove(j.path(ref)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func main() {
	dag := weir.NewDAG("journal_state")
	dag.Go("remember", func(ctx context.Context, tc *weir.TaskContext) (any, error) {
		st := tc.TaskState()
		if err := st.Set(ctx, "cursor", map[string]any{"page": 7}); err != nil {
			return nil, err
		}
		v, err := st.Get(ctx, "cursor", nil)
		if err != nil {
			return nil, err
		}
		if fmt.Sprint(v) != "map[page:7]" {
			return nil, fmt.Errorf("cursor read back as %v", v)
		}
		if err := st.Set(ctx, "scratch", "temporary"); err != nil {
			return nil, err
		}
		return v, st.Delete(ctx, "scratch")
	})
	dag.Bash("shell", ` + "`" + `weir task-state set note '"from bash"' && test "$(weir task-state get note)" = '"from bash"'` + "`" + `)
	weir.MainWith([]*weir.DAG{dag}, weir.WithStateBackend("journal", journal{dir: os.Getenv("JOURNAL_DIR")}))
}
`

// docs/state-backends.md#custom-backends-in-go, on both engines: a program
// built against the SDK registers a custom backend and [state_store]
// backend names it; its DAG's Go task and bash task (through the in-task
// CLI) set and get task state through the backend, which saw each value
// serialized and read back; the database holds references only; the
// value a task deleted, and then every value an admin cleared, is cleaned
// up by the worker's sweep, leaving the backend empty. A name the program
// does not register stops the worker at start, naming the registered ones.
func TestCustomStateBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	t.Parallel()
	bin := buildModule(t, t.TempDir(), journalProgram)

	t.Run("unknown name", func(t *testing.T) {
		t.Parallel()
		r := weirtest.Run(t, bin, []string{"WEIR__STATE_STORE__BACKEND=nosuch"}, "dags", "test", "journal_state", "--home", t.TempDir())
		want := `state backend "nosuch" is not registered (this program registers journal)`
		if r.Code == 0 || !strings.Contains(r.Stderr, want) {
			t.Errorf("dags test with an unknown backend: exit %d\n%s\nwant a failure saying %s", r.Code, r.Stderr, want)
		}
	})
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			journal := t.TempDir()
			env := []string{"JOURNAL_DIR=" + journal, "WEIR__STATE_STORE__BACKEND=journal",
				"WEIR__WORKERS__STATE_SWEEP_INTERVAL=1s", "WEIR__CORE__DAGS_ARE_PAUSED_AT_CREATION=false"}
			if engine == "postgres" {
				env = append(env, "WEIR__DATABASE__CONN="+pgtest.DSN(t))
			}
			s := weirtest.StartStandalone(t, bin, t.TempDir(), t.TempDir(), env...)
			s.API.WaitDAG("journal_state")
			s.API.Trigger("journal_state", "r1", nil)
			s.API.WaitRunSuccess("journal_state", "r1")

			calls := func() []string {
				data, err := os.ReadFile(filepath.Join(journal, "calls"))
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				return strings.Split(strings.TrimSpace(string(data)), "\n")
			}
			refOf := func(op, task, key string) string {
				re := regexp.MustCompile(`^` + op + ` (task/journal_state/r1/` + task + `/-1/` + key + `/[0-9a-f]{32})$`)
				for _, c := range calls() {
					if m := re.FindStringSubmatch(c); m != nil {
						return m[1]
					}
				}
				t.Fatalf("the backend saw no %s of %s's %s; calls:\n%s", op, task, key, strings.Join(calls(), "\n"))
				return ""
			}
			cursor, note, scratch := refOf("serialize", "remember", "cursor"), refOf("serialize", "shell", "note"), refOf("serialize", "remember", "scratch")
			if refOf("deserialize", "remember", "cursor") != cursor || refOf("deserialize", "shell", "note") != note {
				t.Errorf("the gets read other references than the sets wrote; calls:\n%s", strings.Join(calls(), "\n"))
			}
			var entry struct {
				Value any `json:"value"`
			}
			s.API.Get("/api/v2/dags/journal_state/dagRuns/r1/taskInstances/remember/state-store/cursor", &entry)
			if m, ok := entry.Value.(map[string]any); !ok || len(m) != 1 || m["__weir_state_ref__"] != cursor {
				t.Errorf("the database holds %v for cursor, want only its reference %s", entry.Value, cursor)
			}
			objects := func() []string {
				ents, err := os.ReadDir(filepath.Join(journal, "objects"))
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, e := range ents {
					names = append(names, strings.ReplaceAll(e.Name(), "#", "/"))
				}
				slices.Sort(names)
				return names
			}
			weirtest.WaitFor(t, "the sweep to clean up the deleted scratch value", func() (bool, string) {
				return slices.Contains(calls(), "cleanup "+scratch) && !slices.Contains(objects(), scratch), strings.Join(objects(), " ")
			})
			if got := objects(); !slices.Equal(got, sortedOf(cursor, note)) {
				t.Errorf("the backend keeps %v, want the two live values %v", got, sortedOf(cursor, note))
			}

			for _, task := range []string{"remember", "shell"} {
				if code, body := s.API.Do(http.MethodDelete, "/api/v2/dags/journal_state/dagRuns/r1/taskInstances/"+task+"/state-store", nil); code != http.StatusNoContent && code != http.StatusOK {
					t.Fatalf("admin clear of %s's state: %d %s", task, code, body)
				}
			}
			weirtest.WaitFor(t, "the sweep to clean up what the admin cleared", func() (bool, string) {
				return len(objects()) == 0, strings.Join(objects(), " ")
			})
			for _, ref := range []string{cursor, note} {
				if !slices.Contains(calls(), "cleanup "+ref) {
					t.Errorf("no cleanup call for %s; calls:\n%s", ref, strings.Join(calls(), "\n"))
				}
			}
		})
	}
}

// sortedOf returns refs sorted.
func sortedOf(refs ...string) []string { return slices.Sorted(slices.Values(refs)) }
