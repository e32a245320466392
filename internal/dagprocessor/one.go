package dagprocessor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// RecordOne records the DAG dagID as the folder (or Extra) defines it now,
// and nothing else: no other DAG, import error or active flag changes. It is
// what `weir dags test` uses to run one DAG in isolation next to a running
// deployment, whose own processor stays the only one that deactivates DAGs.
// It returns the DAG recorded, the file's import error when the DAG's file
// is broken, and an error wrapping core.ErrNotFound when no source defines
// dagID. Of the folder's recorded parses, a processor's first RecordOne
// reads the DAGs of the file it records alone (the others' ids and sums
// tell which files are unchanged and who defines what).
func (p *Processor) RecordOne(ctx context.Context, dagID string) (*core.DAG, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files == nil { // the first load: of the recorded parses, one file's DAGs are needed
		p.lazyDAGs = true
	}
	plan, err := p.load(ctx)
	if err != nil {
		return nil, err
	}
	src, ok := plan.owner[dagID]
	if !ok {
		return nil, fmt.Errorf("dag %q is not defined in %s: %w%s", dagID, orNone(p.Dir), core.ErrNotFound, failing(plan.importErrors))
	}
	for _, fd := range plan.dags {
		if fd.id == dagID {
			d, err := fd.DAG(ctx)
			if err != nil {
				return nil, err
			}
			// Recorded nowhere, the folder's other import errors are said
			// here: a second file defining the DAG is one of them.
			files := slices.Sorted(maps.Keys(plan.importErrors))
			for _, f := range files[:min(len(files), shownImportErrors)] {
				p.logger().Warn("dag import error (not recorded by a test)", "file", f, "err", plan.importErrors[f])
			}
			if n := len(files) - shownImportErrors; n > 0 {
				p.logger().Warn("more files fail to load", "count", n, "dir", p.Dir)
			}
			if err := p.sync(ctx, &d, p.now()); err != nil {
				return nil, err
			}
			return &d, nil
		}
	}
	return nil, fmt.Errorf("dag %q: %s does not load: %s", dagID, src, plan.importErrors[src])
}

// shownImportErrors is how many import errors a DAG not found lists, and
// how many problems of each.
const shownImportErrors = 5

// failing lists the files that fail to load, with their errors, after a
// DAG was not found: it may be in one of them, and a test records no
// import errors for `weir dags list-import-errors` to show.
func failing(importErrors map[string]string) string {
	if len(importErrors) == 0 {
		return ""
	}
	files := slices.Sorted(maps.Keys(importErrors))
	var b strings.Builder
	fmt.Fprintf(&b, "; %d file(s) there fail to load:", len(files))
	for _, f := range files[:min(len(files), shownImportErrors)] {
		msg := importErrors[f]
		if !strings.HasPrefix(msg, f) { // the loaders' messages name the file
			msg = f + ": " + msg
		}
		lines := strings.Split(msg, "\n") // a problem a line
		if len(lines) > shownImportErrors {
			lines = append(lines[:shownImportErrors], fmt.Sprintf("and %d more problems", len(lines)-shownImportErrors))
		}
		b.WriteString("\n  " + strings.Join(lines, "\n    "))
	}
	if n := len(files) - shownImportErrors; n > 0 {
		fmt.Fprintf(&b, "\n  and %d more", n)
	}
	return b.String()
}

func orNone(dir string) string {
	if dir == "" {
		return "the program's DAGs"
	}
	return dir
}

// ImportErrors parses the folder (and Extra) as the processor does and
// returns each file that fails to load, with why, by file name. It records
// no DAG, import error or active flag (only the parses it keeps, ADR
// 0030): `weir dags list-import-errors --dags FOLDER` checks a folder the
// deployment's processor may not read.
func (p *Processor) ImportErrors(ctx context.Context) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	plan, err := p.load(ctx)
	if err != nil {
		return nil, err
	}
	return plan.importErrors, nil
}
