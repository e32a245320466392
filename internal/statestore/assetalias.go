package statestore

import (
	"context"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// InletAssets returns the concrete assets task taskID of dag reads: its
// concrete inlets, then the active assets its alias inlets resolve to now
// (what producers added to the aliases so far), once each (docs/requirements.md#as-2).
func (s *Service) InletAssets(ctx context.Context, dag *core.DAG, taskID string) ([]core.Asset, error) {
	t := dag.Task(taskID)
	if t == nil {
		return nil, nil
	}
	out := dag.ConcreteAssets(t.Inlets)
	for _, r := range t.Inlets {
		if r.Concrete() {
			continue
		}
		models, err := s.st.AssetAliasResolve(ctx, r.Alias)
		if err != nil {
			return nil, fmt.Errorf("resolve alias inlet %q of task %s: %w", r.Alias, taskID, err)
		}
		for _, m := range models {
			if m.Active {
				out = append(out, core.Asset{Name: m.Name, URI: m.URI, Group: m.Group, Extra: m.Extra})
			}
		}
	}
	return mergeAssets(out), nil
}

// TaskAssets returns the concrete assets task taskID of dag reaches
// (docs/requirements.md#as-2): InletAssets, then its concrete outlets, once
// each. Without alias inlets it is DeclaredAssets.
func (s *Service) TaskAssets(ctx context.Context, dag *core.DAG, taskID string) ([]core.Asset, error) {
	inlets, err := s.InletAssets(ctx, dag, taskID)
	if err != nil || dag.Task(taskID) == nil {
		return inlets, err
	}
	return mergeAssets(append(inlets, dag.ConcreteAssets(dag.Task(taskID).Outlets)...)), nil
}

// mergeAssets drops later assets of a name already listed.
func mergeAssets(in []core.Asset) []core.Asset {
	seen := make(map[string]bool, len(in))
	out := in[:0]
	for _, a := range in {
		if !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	return out
}
