package dagprocessor

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// A processor that starts (a `weir dags test`, a restarted scheduler)
// parses only the files whose bytes no processor of the same parser has
// parsed: for the others it uses the recorded DAGs or error, with the same
// outcome (DAG versions, import errors, ownership of a dag_id). A changed
// file, or another parser (a new weir build), parses again; a removed
// file's record goes.
func TestRecordedParsesAreReused(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	p.Parser = "build-1"
	a, broken, dup := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "broken.yaml"), filepath.Join(dir, "b_dup.yaml")
	write(t, a, dagYAML("alpha", "echo 1"))
	write(t, broken, "dag_id: gamma\ntasks:\n  - task_id: t\n    operator: bash\n    retries: -1\n    bash_command: x\n")
	write(t, dup, dagYAML("alpha", "echo dup")+"---\n"+dagYAML("other", "echo o"))
	syncOnce(t, p)
	if p.parses != 3 {
		t.Fatalf("first processor: parses = %d, want 3", p.parses)
	}
	errs := importErrors(t, p)
	v1, err := storeOf(p).DagVersionLatest(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}

	restart := func(parser string) *Processor {
		t.Helper()
		q := &Processor{Store: p.Store, Dir: dir, Clock: p.Clock, PauseNew: true, Parser: parser}
		syncOnce(t, q)
		return q
	}
	q := restart("build-1")
	if q.parses != 0 {
		t.Errorf("a restarted processor of the same parser parsed %d unchanged files, want 0", q.parses)
	}
	if got := importErrors(t, q); !cmp.Equal(got, errs) {
		t.Errorf("import errors from the recorded parses differ (-first +reused):\n%s", cmp.Diff(errs, got))
	}
	if v, err := storeOf(p).DagVersionLatest(t.Context(), "alpha"); err != nil || v.ID != v1.ID || v.Spec.FileLoc != a {
		t.Errorf("alpha after the reuse: version %+v (%v), want version %d from %s", v, err, v1.ID, a)
	}
	if d, err := (&Processor{Store: p.Store, Dir: dir, Parser: "build-1"}).RecordOne(t.Context(), "alpha"); err != nil || d.DagID != "alpha" || d.FileLoc != a {
		t.Errorf("RecordOne from the recorded parses: %+v, %v; want alpha from %s", d, err, a)
	}

	write(t, a, dagYAML("alpha", "echo 1"))
	running := restart("build-1")
	// A running processor parses a file changed after its start, and again
	// when it changes back to the bytes it had read from a record.
	for i, cmd := range []string{"echo 2", "echo 1"} {
		write(t, a, dagYAML("alpha", cmd))
		later := time.Now().Add(time.Duration(i+1) * time.Hour)
		if err := os.Chtimes(a, later, later); err != nil {
			t.Fatal(err)
		}
		syncOnce(t, running)
		if running.parses != i+1 {
			t.Errorf("a running processor, a.yaml changed to %s: parses = %d, want %d", cmd, running.parses, i+1)
		}
	}
	write(t, a, dagYAML("alpha", "echo 2"))
	if q := restart("build-1"); q.parses != 1 {
		t.Errorf("after a.yaml changed: parses = %d, want 1", q.parses)
	}
	if v, _ := storeOf(p).DagVersionLatest(t.Context(), "alpha"); v.Spec.Tasks[0].Args["bash_command"] != "echo 2" {
		t.Errorf("alpha after its file changed: %v, want echo 2", v.Spec.Tasks[0].Args)
	}
	if q := restart("build-2"); q.parses != 3 {
		t.Errorf("another parser: parses = %d, want 3", q.parses)
	}
	if q := restart(""); q.parses != 3 {
		t.Errorf("no parser: parses = %d, want 3", q.parses)
	}

	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	restart("build-2")
	files, err := storeOf(p).DagFileList(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, f := range files {
		locs = append(locs, f.Fileloc)
	}
	if want := []string{a, dup}; !slices.Equal(locs, want) {
		t.Errorf("recorded files after broken.yaml was removed: %v, want %v", locs, want)
	}
}

// What a recorded parse gives back is what the store and the scheduler
// would get from parsing: the same hash, the same JSON (what a DAG version
// records) and the same warnings, for every example and test DAG file.
func TestRecordedParsesGiveTheSameDAGs(t *testing.T) {
	t.Parallel()
	var paths []string
	for _, pattern := range []string{"../../examples/*/*.yaml", "../../examples/*/*/*.yaml", "../../internal/dagfile/testdata/*/*.yaml",
		"../../internal/dagprocessor/testdata/recorded/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	// One processor parses and records every file, another reuses them.
	p := &Processor{Store: sqlitetest.Open(t), Dir: "../..", Parser: "build-1"}
	q := &Processor{Store: p.Store, Dir: "../..", Parser: "build-1"}
	if err := p.initParsed(t.Context()); err != nil {
		t.Fatal(err)
	}
	type parse struct {
		dags    []core.DAG
		loadErr error
		sum     [sha256.Size]byte
	}
	parses := map[string]parse{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dags, loadErr := dagfile.Load(path, data)
		sum := sha256.Sum256(data)
		parses[path] = parse{dags, loadErr, sum}
		p.record(t.Context(), path, sum[:], dags, loadErr)
	}
	if err := q.initParsed(t.Context()); err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, path := range paths {
		dags, loadErr, sum := parses[path].dags, parses[path].loadErr, parses[path].sum
		var got fileState
		if !q.reuse(path, sum[:], &got) {
			t.Fatalf("%s: the recorded parse is not reused", path)
		}
		if loadErr != nil {
			if got.err == nil || got.err.Error() != loadErr.Error() {
				t.Errorf("%s: recorded error %v, want %v", path, got.err, loadErr)
			}
			continue
		}
		loaded++
		if got.err != nil || len(got.dags) != len(dags) {
			t.Fatalf("%s: recorded %d dags, %v; want %d", path, len(got.dags), got.err, len(dags))
		}
		for i := range dags {
			want := &dags[i]
			have, err := got.dags[i].DAG(t.Context())
			if err != nil || got.dags[i].id != want.DagID {
				t.Fatalf("%s: recorded dag %d is %q (%v), want %s", path, i, got.dags[i].id, err, want.DagID)
			}
			wj, _ := json.Marshal(want)
			hj, _ := json.Marshal(&have)
			if dagfile.Hash(want) != dagfile.Hash(&have) || string(wj) != string(hj) ||
				strings.Join(dagfile.Warnings(want), "\n") != strings.Join(dagfile.Warnings(&have), "\n") {
				t.Errorf("%s: dag %s differs once recorded:\n%s\n%s", path, want.DagID, wj, hj)
			}
		}
	}
	if loaded < 20 {
		t.Errorf("only %d files loaded: the globs miss the examples", loaded)
	}
	rows, err := p.Store.DagFileList(t.Context(), nil)
	if err != nil || len(rows) != len(paths) {
		t.Errorf("recorded %d files (%v), want %d", len(rows), err, len(paths))
	}
}

// dagFileReads counts what a processor reads of the recorded parses: the
// lists with and without their DAGs, and the files read whole.
type dagFileReads struct {
	Store
	mu              sync.Mutex
	lists, bareList int
	got             []string
	onGet           func() // before each DagFileGet
}

func (s *dagFileReads) DagFileList(ctx context.Context, p *store.DagFileListParams) ([]store.DagFile, error) {
	s.mu.Lock()
	if p != nil && p.NoDAGs {
		s.bareList++
	} else {
		s.lists++
	}
	s.mu.Unlock()
	return s.Store.DagFileList(ctx, p)
}

func (s *dagFileReads) DagFileGet(ctx context.Context, fileloc string) (*store.DagFile, error) {
	s.mu.Lock()
	s.got = append(s.got, filepath.Base(fileloc))
	s.mu.Unlock()
	if s.onGet != nil {
		s.onGet()
	}
	return s.Store.DagFileGet(ctx, fileloc)
}

// RecordOne (`weir dags test`) reads the DAGs of the one recorded parse it
// needs, not every file's: a folder of many DAGs costs a test their ids
// and sums alone. A record replaced between the list and the read is said,
// not used.
func TestRecordOneReadsOneRecordedFile(t *testing.T) {
	t.Parallel()
	p, dir := newProcessor(t)
	p.Parser = "build-1"
	for _, id := range []string{"alpha", "beta", "gamma"} {
		write(t, filepath.Join(dir, id+".yaml"), dagYAML(id, "echo "+id))
	}
	syncOnce(t, p) // every file parsed and recorded

	reads := &dagFileReads{Store: p.Store}
	one := &Processor{Store: reads, Dir: dir, Parser: "build-1"}
	first, endFirst := context.WithCancel(t.Context())
	d, err := one.RecordOne(first, "beta")
	if err != nil || d.DagID != "beta" || d.Tasks[0].Args["bash_command"] != "echo beta" {
		t.Fatalf("RecordOne(beta) = %+v, %v; want beta's DAG", d, err)
	}
	if one.parses != 0 {
		t.Errorf("RecordOne parsed %d files, want none (all recorded)", one.parses)
	}
	if reads.lists != 0 || reads.bareList != 1 || !slices.Equal(reads.got, []string{"beta.yaml"}) {
		t.Errorf("RecordOne read %d whole lists, %d lists without DAGs and the files %v; want 0, 1 and [beta.yaml]",
			reads.lists, reads.bareList, reads.got)
	}

	// The same processor records another DAG after the first call's
	// context ended: its records' DAGs are read with the new one.
	endFirst()
	if d, err := one.RecordOne(t.Context(), "gamma"); err != nil || d.DagID != "gamma" {
		t.Errorf("a second RecordOne (gamma) after the first's context ended: %+v, %v", d, err)
	}

	// A processor that records every DAG reads the list whole.
	whole := &dagFileReads{Store: p.Store}
	syncOnce(t, &Processor{Store: whole, Dir: dir, Parser: "build-1", Clock: p.Clock, PauseNew: true})
	if whole.lists != 1 || whole.bareList != 0 || len(whole.got) != 0 {
		t.Errorf("a processor's sync read %d whole lists, %d without DAGs, files %v; want 1, 0, none",
			whole.lists, whole.bareList, whole.got)
	}

	// Another process records beta's file anew (another parser) between
	// the list and the read.
	raced := &dagFileReads{Store: p.Store}
	raced.onGet = func() {
		if err := storeOf(p).DagFileSet(t.Context(), &store.DagFile{Fileloc: filepath.Join(dir, "beta.yaml"), Parser: "build-2",
			Sum: "other", DagIDs: []string{"beta"}, DAGs: `[{"dag_id":"beta"}]`}); err != nil {
			t.Error(err)
		}
	}
	_, err = (&Processor{Store: raced, Dir: dir, Parser: "build-1"}).RecordOne(t.Context(), "beta")
	if err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("RecordOne with its record replaced meanwhile: err = %v, want it to say the record changed", err)
	}
	// Or deletes it: the DAG is not "not found" (a test would then run a
	// deployment's recorded version instead).
	gone := &dagFileReads{Store: p.Store}
	gone.onGet = func() {
		if err := storeOf(p).DagFileDelete(t.Context(), filepath.Join(dir, "alpha.yaml")); err != nil {
			t.Error(err)
		}
	}
	_, err = (&Processor{Store: gone, Dir: dir, Parser: "build-1"}).RecordOne(t.Context(), "alpha")
	if err == nil || errors.Is(err, core.ErrNotFound) || !strings.Contains(err.Error(), "changed while it was read") {
		t.Errorf("RecordOne with its record deleted meanwhile: err = %v, want it to say the record changed, not ErrNotFound", err)
	}
}
