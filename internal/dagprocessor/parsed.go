package dagprocessor

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/store"
)

// initParsed reads the recorded parses of the folder's files, when Parser
// is set; p.mu must be held.
func (p *Processor) initParsed(ctx context.Context) error {
	p.unused, p.recorded = map[string]store.DagFile{}, map[string]bool{}
	if p.Parser == "" {
		return nil
	}
	files, err := p.Store.DagFileList(ctx, &store.DagFileListParams{NoDAGs: p.lazyDAGs})
	if err != nil {
		return fmt.Errorf("list parsed dag files: %w", err)
	}
	for _, f := range files {
		if p.ours(f.Fileloc) {
			p.unused[f.Fileloc], p.recorded[f.Fileloc] = f, true
		}
	}
	return nil
}

// reuse gives st what the recorded parse of path gave, if it parsed the
// same bytes with the same Parser, and reports whether it did. A record is
// used at most once, at the file's first read: later reads of a changed
// file find the record of the bytes parsed last, by this processor.
func (p *Processor) reuse(path string, sum []byte, st *fileState) bool {
	f, ok := p.unused[path]
	delete(p.unused, path)
	if !ok || f.Parser != p.Parser || f.Sum != hex.EncodeToString(sum) {
		return false
	}
	if f.Error != "" {
		st.dags, st.err = nil, errors.New(f.Error)
		return true
	}
	rec := &recorded{json: f.DAGs}
	if p.lazyDAGs {
		rec.load = func(ctx context.Context) (string, error) { return p.recordedDAGs(ctx, f) }
	}
	st.dags, st.err = make([]*fileDAG, len(f.DagIDs)), nil
	for i, id := range f.DagIDs {
		st.dags[i] = &fileDAG{id: id, rec: rec, i: i}
	}
	return true
}

// recordedDAGs reads the DAGs of listed, a recorded parse listed without
// them, provided the record still holds the parse listed: one replaced or
// deleted since (another process parsed the file anew, or saw it go) is
// an error of its own, never core.ErrNotFound, which would say the DAG is
// not defined.
func (p *Processor) recordedDAGs(ctx context.Context, listed store.DagFile) (string, error) {
	f, err := p.Store.DagFileGet(ctx, listed.Fileloc)
	switch {
	case errors.Is(err, core.ErrNotFound):
	case err != nil:
		return "", err
	case f.Parser == listed.Parser && f.Sum == listed.Sum && f.Error == "":
		return f.DAGs, nil
	}
	return "", fmt.Errorf("the recorded parse of %s changed while it was read (another process parsed the file since): run the test again", listed.Fileloc)
}

// record keeps what parsing path gave for any process's next parse of the
// same bytes, unless the result may differ next time (dagfile.Transient).
// A failure to record is logged: the file is parsed again next time.
func (p *Processor) record(ctx context.Context, path string, sum []byte, dags []core.DAG, loadErr error) {
	if p.Parser == "" || dagfile.Transient(loadErr) {
		return
	}
	f := store.DagFile{Fileloc: path, Parser: p.Parser, Sum: hex.EncodeToString(sum), ParsedAt: p.now()}
	if loadErr != nil {
		f.Error = loadErr.Error()
	} else {
		b, err := json.Marshal(dags)
		if err != nil { // Validate rejects what JSON cannot encode
			return
		}
		f.DAGs = string(b)
		for i := range dags {
			f.DagIDs = append(f.DagIDs, dags[i].DagID)
		}
	}
	if err := p.Store.DagFileSet(ctx, &f); err != nil {
		p.logger().Warn("record the parse of a dag file", "file", path, "err", err)
		return
	}
	p.recorded[path] = true
}

// forgetParsed deletes the recorded parses of files no longer in the
// folder.
func (p *Processor) forgetParsed(ctx context.Context, present map[string]bool) {
	for path := range p.recorded {
		if present[path] {
			continue
		}
		if err := p.Store.DagFileDelete(ctx, path); err != nil {
			p.logger().Warn("forget the parse of a removed dag file", "file", path, "err", err)
			continue
		}
		delete(p.recorded, path)
		delete(p.unused, path)
	}
}
