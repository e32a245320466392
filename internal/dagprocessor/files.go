package dagprocessor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
)

// fileState is what the processor remembers of one DAG file.
type fileState struct {
	modTime time.Time
	size    int64
	sum     [sha256.Size]byte
	loaded  bool       // sum is the content last parsed
	dags    []*fileDAG // DAGs of the last parse, when err is nil
	err     error      // why the file does not load
}

// fileDAG is one DAG a source defines: parsed, or recorded (reuse) and
// decoded only when it is synced.
type fileDAG struct {
	id  string
	dag *core.DAG // nil until a recorded DAG is decoded
	rec *recorded // the file's recorded DAGs, of which this is the i-th
	i   int
}

// recorded is the JSON of a file's recorded DAGs, split when one of them
// is first decoded; read by load first when the record was listed without
// it (Processor.lazyDAGs).
type recorded struct {
	json  string
	load  func(context.Context) (string, error)
	split []json.RawMessage
}

func parsedDAGs(dags []core.DAG) []*fileDAG {
	out := make([]*fileDAG, len(dags))
	for i := range dags {
		out[i] = &fileDAG{id: dags[i].DagID, dag: &dags[i]}
	}
	return out
}

// DAG returns a copy of the DAG to sync, decoding a recorded one once
// (reading it first, with ctx, when it was listed without its DAGs).
func (f *fileDAG) DAG(ctx context.Context) (core.DAG, error) {
	if f.dag == nil {
		if f.rec.split == nil {
			if f.rec.load != nil {
				js, err := f.rec.load(ctx)
				if err != nil {
					return core.DAG{}, fmt.Errorf("read the recorded parse of dag %s: %w", f.id, err)
				}
				f.rec.json, f.rec.load = js, nil
			}
			if err := json.Unmarshal([]byte(f.rec.json), &f.rec.split); err != nil {
				return core.DAG{}, fmt.Errorf("decode the recorded parse of dag %s: %w", f.id, err)
			}
		}
		var d core.DAG
		if f.i >= len(f.rec.split) {
			return core.DAG{}, fmt.Errorf("decode the recorded parse of dag %s: it holds %d dags", f.id, len(f.rec.split))
		}
		// Numbers stay as written: a float64 would round integers past
		// 2^53 in params and arguments.
		dec := json.NewDecoder(bytes.NewReader(f.rec.split[f.i]))
		dec.UseNumber()
		if err := dec.Decode(&d); err != nil {
			return core.DAG{}, fmt.Errorf("decode the recorded parse of dag %s: %w", f.id, err)
		}
		f.dag, f.rec = &d, nil // the record's JSON is kept only while a DAG of it is undecoded
	}
	return *f.dag, nil
}

// refreshAll re-reads files whose size or modification time changed and
// re-parses those whose content changed; it forgets vanished files.
func (p *Processor) refreshAll(ctx context.Context, paths []string) error {
	present := make(map[string]bool, len(paths))
	for _, path := range paths {
		present[path] = true
		st := p.files[path]
		if st == nil {
			st = &fileState{}
			p.files[path] = st
		}
		if err := p.refresh(ctx, path, st); err != nil {
			return err
		}
	}
	for path := range p.files {
		if !present[path] {
			delete(p.files, path)
		}
	}
	p.forgetParsed(ctx, present)
	return nil
}

// refresh re-reads and re-parses one file if it changed (unless its bytes
// were parsed by the same Parser before: reuse), within the loader's
// limits: a file over a limit is an import error like any other.
// It returns an error only when ctx ended (the file is then read again at
// the next scan).
func (p *Processor) refresh(ctx context.Context, path string, st *fileState) error {
	fi, err := os.Stat(path)
	if err != nil {
		st.err, st.loaded = err, false
		return nil
	}
	if st.loaded && fi.ModTime().Equal(st.modTime) && fi.Size() == st.size {
		return nil
	}
	data, err := p.loader.ReadFile(path)
	if err != nil {
		st.err, st.loaded = err, false
		return nil
	}
	st.modTime, st.size = fi.ModTime(), fi.Size()
	sum := sha256.Sum256(data)
	if st.loaded && sum == st.sum {
		return nil
	}
	if !p.reuse(path, sum[:], st) {
		p.parses++
		dags, err := p.loader.Load(ctx, path, data)
		if ctx.Err() != nil {
			st.loaded = false
			return fmt.Errorf("parse %s: %w", path, ctx.Err())
		}
		st.dags, st.err = parsedDAGs(dags), err
		p.record(ctx, path, sum[:], dags, err)
	}
	st.sum, st.loaded = sum, true
	return nil
}

// plan is the outcome of one scan: the DAGs to record, who owns each
// dag_id (including the last good DAGs of broken files, which stay active),
// and the import errors.
type plan struct {
	dags         []*fileDAG
	owner        map[string]string // dag_id → source
	importErrors map[string]string // filename → message
}

// keep returns every dag_id still defined, sorted.
func (pl *plan) keep() []string { return sortedKeys(pl.owner) }

// plan decides ownership: Go SDK DAGs first, then files that owned a DAG
// at the previous scan, then the others in path order. A file whose dag_id
// is taken is an import error as a whole.
func (p *Processor) plan(paths []string) *plan {
	pl := &plan{owner: map[string]string{}, importErrors: map[string]string{}}
	for i := range p.Extra {
		d := p.Extra[i]
		loc := extraLoc(&d)
		d.FileLoc = loc
		dagfile.ApplyDefaults(&d)
		err := dagfile.ValidateWith(&d, p.loader.Options())
		if err == nil {
			if other, taken := pl.owner[d.DagID]; taken {
				err = fmt.Errorf("dag_id %q is already defined in %s", d.DagID, other)
			}
		}
		if err != nil {
			pl.importErrors[loc] = joinMsg(pl.importErrors[loc], err.Error())
			continue
		}
		pl.owner[d.DagID] = loc
		pl.dags = append(pl.dags, &fileDAG{id: d.DagID, dag: &d})
	}
	ordered := slices.Clone(paths)
	slices.SortStableFunc(ordered, func(a, b string) int { return boolRank(p.ownedBefore(b)) - boolRank(p.ownedBefore(a)) })
	for _, path := range ordered {
		st := p.files[path]
		if st.err != nil {
			pl.importErrors[path] = st.err.Error()
			// Its DAGs stay active at their last good version.
			for _, id := range sortedKeys(p.owner) {
				if _, taken := pl.owner[id]; !taken && p.owner[id] == path {
					pl.owner[id] = path
				}
			}
			continue
		}
		if msg := pl.conflict(st.dags); msg != "" {
			pl.importErrors[path] = fmt.Sprintf("%s: %s", path, msg)
			continue
		}
		for _, d := range st.dags {
			pl.owner[d.id] = path
			pl.dags = append(pl.dags, d)
		}
	}
	return pl
}

func (pl *plan) conflict(dags []*fileDAG) string {
	for _, d := range dags {
		if other, taken := pl.owner[d.id]; taken {
			return fmt.Sprintf("dag_id %q is already defined in %s; dag ids must be unique", d.id, other)
		}
	}
	return ""
}

// ownedBefore reports whether path owned any DAG at the previous scan.
func (p *Processor) ownedBefore(path string) bool {
	for _, src := range p.owner {
		if src == path {
			return true
		}
	}
	return false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// extraLoc is a Go SDK DAG's source name: its FileLoc, or "go:<dag_id>".
func extraLoc(d *core.DAG) string {
	if d.FileLoc != "" {
		return d.FileLoc
	}
	return "go:" + d.DagID
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}
