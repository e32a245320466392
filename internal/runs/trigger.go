package runs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/schedule"
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
	// DataIntervalStart and DataIntervalEnd default, for a manual run
	// that sets neither, to the interval the DAG's timetable gives a
	// manual run at the logical date (NewRun.InferInterval); otherwise to
	// the logical date.
	DataIntervalStart, DataIntervalEnd *time.Time
	// PartitionKey is the partition the run is for (nil = none): 1 to 256
	// bytes of printable text, as an event's.
	PartitionKey *string
	// Running creates the run running, as `weir dags test` does (Airflow's
	// dag.test()): it waits for no max_active_runs slot. Otherwise it is
	// queued, and the scheduler starts it.
	Running bool
	// TestJobID marks the run as run by the `weir dags test` process whose
	// job row this is (core.DagRun.TestJobID); "" for any other run.
	TestJobID string
	// SingleTry gives every task one try, whatever its retries: `weir
	// tasks test` runs its task once, as `airflow tasks test` does.
	SingleTry bool
}

// maxRunIDLen is the longest run_id accepted (Airflow's column width).
const maxRunIDLen = 250

var defaultRunIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(core.DefaultRunIDPattern) })

// generatedRunID matches the run ids RunID makes, which are accepted
// whatever the configured pattern (as Airflow accepts its own).
var generatedRunID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z_]+__\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z(__e\d+)?$`)
})

// NewRun is a validated trigger: every default applied.
type NewRun struct {
	DagID             string
	RunID             string
	RunType           core.RunType
	Conf              json.RawMessage // a compact JSON object
	LogicalDate       time.Time       // at the stored (microsecond) precision
	DataIntervalStart time.Time
	DataIntervalEnd   time.Time
	PartitionKey      *string
	State             core.DagRunState // queued, or running (TriggerParams.Running)
	TestJobID         string           // TriggerParams.TestJobID
	inferInterval     bool             // a manual run that set no data interval
	namedDate         bool             // the caller named the logical date
}

// UniqueLogicalDate says whether the run must be its DAG's only run at its
// logical date, as Airflow's unique (dag_id, logical_date): a manual run
// whose caller named the date (a script that triggers "the run for date
// X" and retries must not make two). A run at "now", a test's, and a run
// for a partition may share one.
func (r *NewRun) UniqueLogicalDate() bool {
	return r.namedDate && r.RunType == core.RunManual && r.TestJobID == "" && r.PartitionKey == nil
}

// InferInterval sets the data interval of a manual run that named none to
// the one spec's timetable gives a manual run at its logical date
// (Airflow's infer_manual_data_interval: a run of a @daily DAG at 01:00
// covers the day before; with CronTriggerTimetable's interval, the
// interval before the logical date). Other runs keep theirs.
func (r *NewRun) InferInterval(spec *core.DAG) {
	tt, err := schedule.Of(spec)
	if !r.inferInterval || err != nil { // a recorded DAG's timetable parses
		return
	}
	iv := tt.Manual(r.LogicalDate)
	r.DataIntervalStart, r.DataIntervalEnd = iv.Start.UTC(), iv.End.UTC()
}

// TriggerRules are the configurable limits of a trigger.
type TriggerRules struct {
	// RunIDPattern is [scheduler] allowed_run_id_pattern: a run id chosen
	// by the caller must match it. nil = core.DefaultRunIDPattern.
	RunIDPattern *regexp.Regexp
}

// PrepareTrigger validates p under rules and applies its defaults at now.
// Errors wrap core.ErrInvalid (bad run type, conf, run id or data interval)
// and name the DAG and the field.
func PrepareTrigger(p TriggerParams, rules TriggerRules, now time.Time) (*NewRun, error) {
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
	if err := rules.CheckRunID(runID); err != nil {
		return nil, fmt.Errorf("trigger dag %q: %w", p.DagID, err)
	}
	if p.PartitionKey != nil {
		if err := emission.CheckPartitionKey(*p.PartitionKey); err != nil {
			return nil, fmt.Errorf("trigger dag %q: %w", p.DagID, err)
		}
	}
	start, end := logical, logical
	if p.DataIntervalStart != nil {
		start = *p.DataIntervalStart
	}
	if p.DataIntervalEnd != nil {
		end = *p.DataIntervalEnd
	}
	if end.Before(start) {
		return nil, fmt.Errorf("trigger dag %q: data interval end %s is before its start %s: %w",
			p.DagID, end.Format(time.RFC3339), start.Format(time.RFC3339), core.ErrInvalid)
	}
	state := core.RunQueued
	if p.Running {
		state = core.RunRunning
	}
	return &NewRun{DagID: p.DagID, RunID: runID, RunType: runType, Conf: conf, LogicalDate: logical,
		DataIntervalStart: start, DataIntervalEnd: end, PartitionKey: p.PartitionKey, State: state, TestJobID: p.TestJobID,
		inferInterval: runType == core.RunManual && p.DataIntervalStart == nil && p.DataIntervalEnd == nil,
		namedDate:     p.LogicalDate != nil}, nil
}

// RunID returns the default run id for a run of type t at logical date d:
// "manual__2024-01-02T03:04:05Z", "scheduled__2024-01-02T00:00:00Z" (RFC 3339
// in UTC, with fractional seconds only when present).
func RunID(t core.RunType, logical time.Time) string {
	return string(t) + "__" + logical.UTC().Format(time.RFC3339Nano)
}

// EventRunID returns the run id of a run made from one group of queued
// events of a partitioned DAG: RunID's, then "__e" and the group's oldest
// event id ("asset_triggered__2024-01-02T03:04:05.5Z__e41"), so runs made
// at one instant differ.
func EventRunID(t core.RunType, logical time.Time, eventID int64) string {
	return fmt.Sprintf("%s__e%d", RunID(t, logical), eventID)
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

// CheckRunID says why id cannot name a new run (nil when it can): blank,
// too long, with a '/' or '\\' or a control character, or not matching
// the allowed pattern (unless it is one RunID makes). Errors wrap
// core.ErrInvalid.
func (r TriggerRules) CheckRunID(id string) error {
	pattern := r.RunIDPattern
	if pattern == nil {
		pattern = defaultRunIDPattern()
	}
	switch {
	case strings.TrimSpace(id) == "":
		return fmt.Errorf("run_id must not be blank: %w", core.ErrInvalid)
	case len(id) > maxRunIDLen:
		return fmt.Errorf("run_id is %d bytes long, at most %d are allowed: %w", len(id), maxRunIDLen, core.ErrInvalid)
	case strings.ContainsAny(id, "/\\"):
		return fmt.Errorf("run_id %q must not contain '/' or '\\': %w", id, core.ErrInvalid)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fmt.Errorf("run_id %q must not contain control characters: %w", id, core.ErrInvalid)
	case !pattern.MatchString(id) && !generatedRunID().MatchString(id):
		return fmt.Errorf("run_id %q does not match the allowed pattern %s ([scheduler] allowed_run_id_pattern): %w",
			id, pattern, core.ErrInvalid)
	}
	return nil
}
