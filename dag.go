package weir

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/operator"
	"github.com/weirflow/weir/internal/trigger"
)

// DAG is a DAG being defined in Go. Create it with NewDAG and add tasks
// with its Go, Bash, HTTP, SQL and Noop methods; hand it to Main.
type DAG struct {
	spec     core.DAG // everything but the tasks
	defaults []TaskOption
	tasks    []*Task
	problems []dagfile.Problem // found while building (paths relative to the DAG)
	// callbacks are the DAG-level Go callbacks by registered name.
	callbacks map[string]CallbackFunc
}

// DAGOption sets a DAG field; pass options to NewDAG.
type DAGOption func(*DAG)

// NewDAG starts the definition of the DAG dag_id (letters, digits, "-",
// "." and "_"). Its source shows as "go:<binary name>" in the UI and in
// errors.
func NewDAG(id string, opts ...DAGOption) *DAG {
	d := &DAG{spec: core.DAG{DagID: id, FileLoc: "go:" + filepath.Base(os.Args[0])}}
	for _, o := range opts {
		o(d)
	}
	return d
}

// ID returns the dag_id.
func (d *DAG) ID() string { return d.spec.DagID }

func (d *DAG) problem(path, format string, args ...any) {
	d.problems = append(d.problems, dagfile.Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// Description is shown in the UI.
func Description(s string) DAGOption { return func(d *DAG) { d.spec.Description = s } }

// Schedule sets when runs are created: "" (only when triggered), "@once",
// a preset such as "@daily", a 5-field cron expression or a duration such as
// "30m" (see docs/dag-files.md). A schedule needs a StartDate.
func Schedule(s string) DAGOption { return func(d *DAG) { d.spec.Schedule = s } }

// Timetable names how a cron Schedule becomes runs, as Airflow's classes
// do: "CronTriggerTimetable" (a run at each fire time, which is its logical
// date; Airflow 3's default) or "CronDataIntervalTimetable" (a run for each
// interval between fire times, once it has ended). Without it the
// deployment's [scheduler] create_cron_data_intervals decides.
func Timetable(name string) DAGOption { return func(d *DAG) { d.spec.Timetable = name } }

// TimetableInterval is CronTriggerTimetable's interval (Airflow's
// argument): each run's data interval ends at its fire time and starts
// iv before it, at its logical date. It needs
// Timetable("CronTriggerTimetable").
func TimetableInterval(iv time.Duration) DAGOption {
	return func(d *DAG) { d.spec.TimetableInterval = core.Duration(iv) }
}

// RunImmediately is CronTriggerTimetable's run_immediately as a boolean:
// whether the DAG's first run without catchup is the latest fire time
// already past (true, the default) or, unless that one is within a tenth
// of the schedule's step, waits for the next one (false, as Airflow's).
func RunImmediately(on bool) DAGOption {
	return func(d *DAG) { d.spec.RunImmediately = &core.RunImmediately{Never: !on} }
}

// RunImmediatelyWithin is CronTriggerTimetable's run_immediately as a
// duration: the DAG's first run without catchup is the latest fire time
// already past if it was at most within ago, else the next one.
func RunImmediatelyWithin(within time.Duration) DAGOption {
	return func(d *DAG) {
		if within <= 0 {
			d.problem("timetable.run_immediately", "RunImmediatelyWithin(%s): must be a positive duration", within)
		}
		d.spec.RunImmediately = &core.RunImmediately{Within: core.Duration(within)}
	}
}

// StartDate is the start of the first data interval.
func StartDate(t time.Time) DAGOption { return func(d *DAG) { d.spec.StartDate = &t } }

// EndDate is the last time an interval may start.
func EndDate(t time.Time) DAGOption { return func(d *DAG) { d.spec.EndDate = &t } }

// Catchup creates a run for every interval since StartDate (true) or only
// the latest complete interval (false, the default).
func Catchup(on bool) DAGOption { return func(d *DAG) { d.spec.Catchup = on } }

// PausedUponCreation says whether the DAG starts paused the first time it
// is recorded (Airflow's is_paused_upon_creation), whatever [core]
// dags_are_paused_at_creation says.
func PausedUponCreation(paused bool) DAGOption {
	return func(d *DAG) { d.spec.IsPausedUponCreation = &paused }
}

// MaxActiveRuns limits the DAG's running runs (default 16; at least 1).
func MaxActiveRuns(n int) DAGOption {
	return func(d *DAG) {
		if n < 1 {
			d.problem("max_active_runs", "must be a positive integer")
		}
		d.spec.MaxActiveRuns = n
	}
}

// MaxActiveTasks limits the DAG's running task instances (default 16; at
// least 1).
func MaxActiveTasks(n int) DAGOption {
	return func(d *DAG) {
		if n < 1 {
			d.problem("max_active_tasks", "must be a positive integer")
		}
		d.spec.MaxActiveTasks = n
	}
}

// Params sets the DAG's parameters and their default values; a run's conf
// overrides them key by key. Later calls add to earlier ones.
func Params(p map[string]any) DAGOption {
	return func(d *DAG) {
		if d.spec.Params == nil {
			d.spec.Params = map[string]any{}
		}
		maps.Copy(d.spec.Params, p)
	}
}

// Tags labels the DAG in the UI and API (each at most 100 characters).
func Tags(tags ...string) DAGOption {
	return func(d *DAG) { d.spec.Tags = append(d.spec.Tags, tags...) }
}

// Timezone is the IANA name (such as "Europe/Amsterdam") the schedule is
// evaluated in; the default is UTC.
func Timezone(name string) DAGOption { return func(d *DAG) { d.spec.Timezone = name } }

// TemplateSyntax is the language of the DAG's templates (its tasks'
// string fields and its callbacks): "jinja", Airflow's ({{ ds }},
// {{ params.x }}), or "go" ({{ .ds }}). Without it the syntax is detected:
// Go when a template is Go syntax, else Jinja (docs/dag-files.md#templates).
func TemplateSyntax(syntax string) DAGOption {
	return func(d *DAG) { d.spec.TemplateSyntax = core.TemplateSyntax(syntax) }
}

// DefaultArgs are task options applied to every task before its own
// options, like YAML's default_args: a task's own option replaces the
// default. An operator option (such as Method) applies only to tasks of its
// operator; DependsOn and the Expand options are not allowed here.
func DefaultArgs(opts ...TaskOption) DAGOption {
	return func(d *DAG) { d.defaults = append(d.defaults, opts...) }
}

// Validate checks the DAG with exactly the rules of YAML DAG files (ids,
// schedule, dates, timezone, dependencies and cycles, trigger rules,
// operator fields, templates, and the triggers tasks wait on against the
// built-in types and those given to RegisterTrigger so far) and returns
// every problem, one per line, as
// `go:<binary>: dag "<dag_id>": tasks.<task_id>.<field>: <problem>`.
func (d *DAG) Validate() error {
	_, err := d.compile()
	return err
}

// compile is compileWith the built-in and registered trigger types.
func (d *DAG) compile() (core.DAG, error) {
	reg, err := triggerTypes(customTriggers)
	if err != nil {
		return core.DAG{}, err
	}
	return d.compileWith(checksOf(reg))
}

// checksOf validates the triggers of DAGs against reg's types: those
// tasks wait on and those of asset watchers.
func checksOf(reg *trigger.Registry) dagfile.Options {
	return dagfile.Options{CheckTrigger: reg.CheckLoaded, CheckWatcher: reg.CheckWatcher, StreamTypes: reg.StreamTypes()}
}

// compileWith returns the DAG's definition with the defaults YAML files
// get, or an error listing every problem; checks validate the triggers
// its tasks wait on (a start trigger, a sensor's) and its watchers'.
func (d *DAG) compileWith(checks dagfile.Options) (core.DAG, error) {
	spec := d.spec
	spec.Params = maps.Clone(d.spec.Params)
	spec.Tags = slices.Clone(d.spec.Tags)
	spec.Tasks = make([]core.Task, len(d.tasks))
	ps := slices.Clone(d.problems)
	for i, t := range d.tasks {
		spec.Tasks[i] = t.definition()
		tps := t.problems
		if spec.Tasks[i].Operator == operator.Sensor && len(tps) == 0 {
			tps = dagfile.BuildSensor(&spec.Tasks[i])
		}
		for _, p := range tps {
			p.Path = fmt.Sprintf("tasks[%d].%s", i, p.Path)
			ps = append(ps, p)
		}
	}
	dagfile.ApplyDefaults(&spec)
	for i := range ps {
		ps[i].File = spec.FileLoc
		ps[i].Path = fmt.Sprintf("dag %q: %s", spec.DagID, ps[i].Path)
	}
	var verr *dagfile.Error
	if err := dagfile.ValidateWith(&spec, checks); err != nil {
		if !errors.As(err, &verr) {
			return spec, fmt.Errorf("validate dag %q: %w", spec.DagID, err)
		}
		ps = append(ps, verr.Problems...)
	}
	if len(ps) == 0 {
		return spec, nil
	}
	for i := range ps {
		ps[i].Path = nameTasks(ps[i].Path, spec.Tasks)
	}
	return spec, &dagfile.Error{Problems: ps}
}

var taskIndexRe = regexp.MustCompile(`tasks\[(\d+)\]`)

// nameTasks rewrites "tasks[2]" in a problem's path to "tasks.<task_id>",
// since a Go DAG's author knows tasks by id, not by position.
func nameTasks(path string, tasks []core.Task) string {
	return taskIndexRe.ReplaceAllStringFunc(path, func(m string) string {
		i, err := strconv.Atoi(taskIndexRe.FindStringSubmatch(m)[1])
		if err != nil || i >= len(tasks) || tasks[i].TaskID == "" {
			return m
		}
		return "tasks." + tasks[i].TaskID
	})
}
