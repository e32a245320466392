package dagprocessor

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// RecordOne records the DAG dagID as the folder (or Extra) defines it now,
// and nothing else: no other DAG, import error or active flag changes. It is
// what `weir dags test` uses to run one DAG in isolation next to a running
// deployment, whose own processor stays the only one that deactivates DAGs.
// It returns the file's import error when the DAG's file is broken, and an
// error wrapping core.ErrNotFound when no source defines dagID.
func (p *Processor) RecordOne(ctx context.Context, dagID string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	plan, err := p.load(ctx)
	if err != nil {
		return err
	}
	src, ok := plan.owner[dagID]
	if !ok {
		return fmt.Errorf("dag %q is not defined in %s (%d file(s) there fail to load): %w",
			dagID, orNone(p.Dir), len(plan.importErrors), core.ErrNotFound)
	}
	for _, fd := range plan.dags {
		if fd.id == dagID {
			d, err := fd.DAG()
			if err != nil {
				return err
			}
			return p.sync(ctx, &d, p.now())
		}
	}
	return fmt.Errorf("dag %q: %s does not load: %s", dagID, src, plan.importErrors[src])
}

func orNone(dir string) string {
	if dir == "" {
		return "the program's DAGs"
	}
	return dir
}
