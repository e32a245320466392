package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TriggerParams describes a run to create. Only DagID is required.
type TriggerParams struct {
	DagID string
	// RunID defaults to "<run_type>__<logical date RFC3339>".
	RunID string
	// RunType defaults to manual.
	RunType core.RunType
	// Conf must be a JSON object when set; it defaults to {}.
	Conf json.RawMessage
	// LogicalDate defaults to now.
	LogicalDate *time.Time
	// DataIntervalStart and DataIntervalEnd default to the logical date.
	DataIntervalStart, DataIntervalEnd *time.Time
}

// maxRunIDLen is the longest run_id accepted (Airflow's column width).
const maxRunIDLen = 250

// Trigger creates a queued run of the DAG's latest version with its task
// instances (see NewTaskInstances) and wakes the scheduler, which starts it
// within the DAG's max_active_runs. Errors wrap core.ErrNotFound (no such
// DAG), core.ErrInvalid (bad conf, run id or run type, or a DAG that has no
// parsed version) or core.ErrConflict (the run id exists).
func Trigger(ctx context.Context, st store.Store, clk core.Clock, p TriggerParams) (*core.DagRun, error) {
	now := clk.Now()
	runType := p.RunType
	if runType == "" {
		runType = core.RunManual
	}
	switch runType {
	case core.RunManual, core.RunScheduled, core.RunAssetTriggered, core.RunBackfill:
	default:
		return nil, fmt.Errorf("trigger dag %q: run_type %q is not one of manual, scheduled, asset_triggered, backfill: %w",
			p.DagID, runType, core.ErrInvalid)
	}
	conf, err := normalizeConf(p.Conf)
	if err != nil {
		return nil, fmt.Errorf("trigger dag %q: %w", p.DagID, err)
	}
	logical := now
	if p.LogicalDate != nil {
		logical = p.LogicalDate.UTC()
	}
	logical = logical.Truncate(time.Microsecond) // the stored precision
	runID := p.RunID
	if runID == "" {
		runID = RunID(runType, logical)
	}
	if err := validateRunID(runID); err != nil {
		return nil, fmt.Errorf("trigger dag %q: %w", p.DagID, err)
	}
	start, end := p.DataIntervalStart, p.DataIntervalEnd
	if start == nil {
		start = &logical
	}
	if end == nil {
		end = &logical
	}
	if end.Before(*start) {
		return nil, fmt.Errorf("trigger dag %q: data interval end %s is before its start %s: %w",
			p.DagID, end.Format(time.RFC3339), start.Format(time.RFC3339), core.ErrInvalid)
	}

	if _, err := st.DagGet(ctx, p.DagID); errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("trigger dag %q: no such DAG: %w", p.DagID, core.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("trigger dag %q: %w", p.DagID, err)
	}
	version, err := st.DagVersionLatest(ctx, p.DagID)
	if errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("trigger dag %q: the DAG has no parsed version yet: %w", p.DagID, core.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("trigger dag %q: load latest version: %w", p.DagID, err)
	}
	var run *core.DagRun
	err = st.WithTx(ctx, func(tx store.Store) error {
		var err error
		run, err = tx.DagRunCreate(ctx, &store.DagRunCreateParams{
			DagID:             p.DagID,
			RunID:             runID,
			RunType:           runType,
			State:             core.RunQueued,
			LogicalDate:       &logical,
			DataIntervalStart: start,
			DataIntervalEnd:   end,
			Conf:              conf,
			DagVersionID:      version.ID,
			Now:               now,
			TaskInstances:     NewTaskInstances(&version.Spec),
		})
		if err != nil {
			return err
		}
		return tx.Notify(ctx, store.ChannelScheduler)
	})
	if err != nil {
		return nil, fmt.Errorf("trigger dag %q run %q: %w", p.DagID, runID, err)
	}
	return run, nil
}

// RunID returns the default run id for a run of type t at logical date d:
// "manual__2024-01-02T03:04:05Z", "scheduled__2024-01-02T00:00:00Z" (RFC 3339
// in UTC, with fractional seconds only when present).
func RunID(t core.RunType, logical time.Time) string {
	return string(t) + "__" + logical.UTC().Format(time.RFC3339Nano)
}

func normalizeConf(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]any
	if err := json.Unmarshal(trimmed, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("conf must be a JSON object such as {\"key\": \"value\"}, got %.40s: %w", trimmed, core.ErrInvalid)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, fmt.Errorf("conf: %w: %w", err, core.ErrInvalid)
	}
	return buf.Bytes(), nil
}

func validateRunID(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return fmt.Errorf("run_id must not be blank: %w", core.ErrInvalid)
	case len(id) > maxRunIDLen:
		return fmt.Errorf("run_id is %d bytes long, at most %d are allowed: %w", len(id), maxRunIDLen, core.ErrInvalid)
	case strings.ContainsAny(id, "/\\"):
		return fmt.Errorf("run_id %q must not contain '/' or '\\': %w", id, core.ErrInvalid)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fmt.Errorf("run_id %q must not contain control characters: %w", id, core.ErrInvalid)
	}
	return nil
}
