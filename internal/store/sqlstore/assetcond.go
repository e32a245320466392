package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// SQL of conditional asset schedules (docs/assets.md#conditional-schedules).
const (
	qDagSetAssetCondition = `UPDATE dag SET asset_condition = $2 WHERE dag_id = $1`
	qDagAssetCondition    = `SELECT asset_condition FROM dag WHERE dag_id = $1`
	// qAssetQueueCandidates finds the active, unpaused DAGs with a
	// conditional schedule and queued events.
	qAssetQueueCandidates = `SELECT d.dag_id FROM dag d
		WHERE d.is_active = TRUE AND d.is_paused = FALSE AND d.asset_condition IS NOT NULL
		AND d.dag_id IN (SELECT target_dag_id FROM asset_dag_run_queue) ORDER BY d.dag_id`
	// qQueuedNames names asset $1 and the aliases that resolve to it.
	qQueuedNames = `SELECT a.name, COALESCE(al.name, '') FROM asset a
		LEFT JOIN asset_alias_asset aa ON aa.asset_id = a.id LEFT JOIN asset_alias al ON al.id = aa.alias_id
		WHERE a.id = $1`
)

// syncAssetCondition records a DAG's conditional schedule with its
// references by name (in AssetSync's transaction), or NULL.
func (s *Store) syncAssetCondition(ctx context.Context, d *core.DAG) error {
	var val any
	if d.AssetCondition != nil {
		b, err := json.Marshal(byName(d, *d.AssetCondition))
		if err != nil {
			return fmt.Errorf("sync assets of dag %s: encode asset condition: %w", d.DagID, err)
		}
		val = string(b)
	}
	_, err := s.tx.ExecContext(ctx, qDagSetAssetCondition, d.DagID, val)
	return s.wrap(err, "sync assets of dag %s: record asset condition", d.DagID)
}

// byName returns c with each concrete reference by the asset's name.
func byName(d *core.DAG, c core.AssetCondition) core.AssetCondition {
	if c.Ref != nil {
		if a := d.Asset(*c.Ref); a != nil {
			return core.AssetCondition{Ref: &core.AssetRef{Name: a.Name}}
		}
		return c
	}
	out := core.AssetCondition{}
	for _, sub := range c.All {
		out.All = append(out.All, byName(d, sub))
	}
	for _, sub := range c.Any {
		out.Any = append(out.Any, byName(d, sub))
	}
	return out
}

// assetCondition reads a DAG's conditional schedule; nil for a plain list.
func (s *Store) assetCondition(ctx context.Context, dagID string) (*core.AssetCondition, error) {
	var raw sql.NullString
	if err := s.reader().QueryRowContext(ctx, qDagAssetCondition, dagID).Scan(&raw); err != nil {
		return nil, s.wrap(err, "read the asset condition of dag %s", dagID)
	}
	if !raw.Valid {
		return nil, nil
	}
	var c core.AssetCondition
	if err := json.Unmarshal([]byte(raw.String), &c); err != nil {
		return nil, fmt.Errorf("decode the asset condition of dag %s: %w", dagID, err)
	}
	return &c, nil
}

// conditionMet evaluates a conditional schedule against queue entries: a
// name is met by an entry of its asset, an alias by an entry of any asset
// it resolves to.
func (s *Store) conditionMet(ctx context.Context, c *core.AssetCondition, entries []store.AssetQueueEntry) (bool, error) {
	names, aliases := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		rows, err := s.reader().QueryContext(ctx, qQueuedNames, e.AssetID)
		if err != nil {
			return false, s.wrap(err, "name queued asset %d", e.AssetID)
		}
		pairs, err := collect(rows, func(r *sql.Rows) ([2]string, error) {
			var p [2]string
			return p, r.Scan(&p[0], &p[1])
		})
		if err != nil {
			return false, s.wrap(err, "name queued asset %d", e.AssetID)
		}
		for _, p := range pairs {
			names[p[0]], aliases[p[1]] = true, true
		}
	}
	return c.Met(func(r core.AssetRef) bool {
		if r.Alias != "" {
			return aliases[r.Alias]
		}
		return names[r.Name]
	}), nil
}

// conditionalReady returns the DAGs with a conditional schedule that their
// queued events meet, for AssetQueueReady.
func (s *Store) conditionalReady(ctx context.Context) ([]string, error) {
	candidates, err := s.dagIDs(ctx, "list dags with conditional asset schedules", qAssetQueueCandidates)
	if err != nil {
		return nil, err
	}
	var ready []string
	for _, dagID := range candidates {
		c, err := s.assetCondition(ctx, dagID)
		if err != nil || c == nil {
			return nil, err
		}
		entries, err := s.AssetQueueList(ctx, dagID)
		if err != nil {
			return nil, err
		}
		if ok, err := s.conditionMet(ctx, c, entries); err != nil {
			return nil, err
		} else if ok {
			ready = append(ready, dagID)
		}
	}
	return ready, nil
}

// scheduleSatisfied reports whether the queue entries a run takes meet the
// DAG's schedule: its condition, or else every scheduled asset and alias.
func (s *Store) scheduleSatisfied(ctx context.Context, dagID string, taken []store.AssetQueueEntry) (bool, string, error) {
	c, err := s.assetCondition(ctx, dagID)
	if err != nil {
		return false, "", err
	}
	if c != nil {
		ok, err := s.conditionMet(ctx, c, taken)
		return ok, "the queued events do not meet " + c.String(), err
	}
	met, want, err := s.scheduleMet(ctx, dagID, taken)
	return want > 0 && met >= want, fmt.Sprintf("%d of %d scheduled assets and aliases have queued events", met, want), err
}

// dagIDs runs query, which selects dag ids.
func (s *Store) dagIDs(ctx context.Context, what, query string) ([]string, error) {
	rows, err := s.reader().QueryContext(ctx, query)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, scanString)
	return out, s.wrap(err, "%s", what)
}

// mergeReady merges two sorted lists of dag ids.
func mergeReady(a, b []string) []string {
	out := append(a, b...)
	slices.Sort(out)
	return slices.Compact(out)
}
