package dagfile

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weirflow/weir/internal/core"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestBadFiles loads every testdata/bad/*.yaml and compares the error text
// with testdata/bad/*.golden (go test -update rewrites them).
func TestBadFiles(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			_, err := LoadFile(file)
			if err == nil {
				t.Fatal("loaded without error")
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("error text mismatch (-want +got):\n%s", d)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !strings.HasPrefix(line, file+":") {
					t.Errorf("problem does not name the file: %q", line)
				}
			}
		})
	}
}

func TestExamplesLoad(t *testing.T) {
	t.Parallel()
	files := exampleFiles(t)
	for _, file := range files {
		dags, err := LoadFile(file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(dags) == 0 {
			t.Errorf("%s: no DAGs", file)
		}
		for i := range dags {
			if err := Validate(&dags[i]); err != nil {
				t.Errorf("%s: loaded DAG does not validate: %v", file, err)
			}
		}
	}
}

// Issue 12: the examples are written in Airflow's template syntax, Jinja
// (none is detected as Go's text/template).
func TestExamplesUseJinja(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../examples/dags/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v, %d files", err, len(files))
	}
	for _, file := range files {
		dags, err := LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dags {
			if d.TemplateSyntax != core.TemplateJinja {
				t.Errorf("%s: dag %s uses template syntax %q, want jinja", file, d.DagID, d.TemplateSyntax)
			}
		}
	}
}

func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../../examples/dags/*.yaml", "testdata/good/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no example files")
	}
	return files
}

func TestLoadFullDAG(t *testing.T) {
	t.Parallel()
	dags, err := LoadFile("testdata/good/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(dags) != 2 {
		t.Fatalf("got %d DAGs, want 2", len(dags))
	}
	ams, _ := time.LoadLocation("Europe/Amsterdam")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, ams).UTC()
	end := time.Date(2024, 12, 31, 23, 0, 0, 0, time.UTC)
	want := core.DAG{
		DagID: "full", Description: "Every field.", Schedule: "0 6 * * 1-5", StartDate: &start, EndDate: &end,
		Catchup: true, MaxActiveRuns: 2, MaxActiveTasks: 8, Timezone: "Europe/Amsterdam", TemplateSyntax: core.TemplateGo,
		Params:            map[string]any{"limit": uint64(10), "region": "eu", "opts": map[string]any{"a": true}, "empty": nil},
		ParamDescriptions: map[string]string{"empty": "No default.", "region": "Region to load."},
		Tags:              []string{"etl", "daily"},
		FileLoc:           "testdata/good/full.yaml",
		Tasks: []core.Task{
			{TaskID: "extract", Operator: "bash", Retries: 3, RetryDelay: core.Duration(90 * time.Second),
				RetryExponentialBackoff: true, MaxRetryDelay: core.Duration(time.Hour), ExecutionTimeout: core.Duration(30 * time.Minute),
				Queue: "etl", Pool: "default_pool", PoolSlots: 1, PriorityWeight: 1, Env: map[string]string{"PORT": "8080", "MODE": "fast"},
				Args: map[string]any{"bash_command": "echo {{ .ds }}\n", "cwd": "/tmp"}},
			{TaskID: "call", Operator: "http", DependsOn: []string{"extract"}, Retries: 3, RetryDelay: core.Duration(90 * time.Second),
				Queue: "default", Pool: "api", PoolSlots: 2, PriorityWeight: 10, ExecutionTimeout: core.Duration(30 * time.Minute),
				Args: map[string]any{"http_conn_id": "api", "endpoint": "/v1/items/{{ .ds }}", "method": "POST",
					"data": map[string]any{"q": "x", "n": []any{uint64(1), uint64(2)}}, "headers": map[string]any{"X-Id": "1"}}},
			{TaskID: "query", Operator: "sql", DependsOn: []string{"call"}, TriggerRule: core.AllDone, Retries: 3,
				RetryDelay: core.Duration(90 * time.Second), Queue: "default", Pool: "default_pool", PoolSlots: 1, PriorityWeight: 1,
				ExecutionTimeout: core.Duration(30 * time.Minute), Args: map[string]any{"conn_id": "warehouse", "sql": "select 1"}},
			{TaskID: "fn", Operator: "go", DependsOn: []string{"query", "extract"}, Retries: 3,
				RetryDelay: core.Duration(90 * time.Second), Queue: "default", Pool: "default_pool", PoolSlots: 1, PriorityWeight: 1,
				ExecutionTimeout: core.Duration(30 * time.Minute),
				Args:             map[string]any{"function": "process", "op_kwargs": map[string]any{"k": "v"}},
				Connections:      []string{"object_store", "ledger"},
				Expand: map[string]core.ExpandSource{
					"item":  {XCom: &core.XComRef{TaskID: "extract", Key: "items"}},
					"batch": {Values: []any{uint64(1), uint64(2)}},
				}},
		},
	}
	if d := cmp.Diff(want, dags[0]); d != "" {
		t.Fatalf("DAG mismatch (-want +got):\n%s", d)
	}
	if dags[1].DagID != "second" || dags[1].Tasks[0].TaskID != "only" {
		t.Fatalf("second document: %+v", dags[1])
	}
}

func TestLoadEmpty(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "# just a comment\n", "---\n"} {
		dags, err := Load("empty.yaml", []byte(src))
		if err != nil || len(dags) != 0 {
			t.Errorf("Load(%q) = %v, %v; want no DAGs and no error", src, dags, err)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	t.Parallel()
	src := "dag_id: bomb\nparams:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g"} {
		src += "  " + name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
			", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = name
	}
	src += "tasks:\n  - {task_id: a, operator: noop}\n"
	_, err := Load("bomb.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "value too large") {
		t.Fatalf("error = %v, want value too large", err)
	}
}

func TestYAMLFeatures(t *testing.T) {
	t.Parallel()
	src := `
dag_id: features
x-common: &common
  operator: bash
  retries: 2
tasks:
  - task_id: a
    <<: *common
    bash_command: echo a
  - task_id: b
    <<: *common
    retries: 5
    bash_command: !!str 123
`
	_, err := Load("f.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), `f.yaml:3:1: x-common: unknown field`) {
		t.Fatalf("want unknown x-common field, got %v", err)
	}
	dags, err := Load("f.yaml", []byte(strings.Replace(src, "x-common: &common", "default_args: &common", 1)))
	if err != nil {
		t.Fatal(err)
	}
	b := dags[0].Tasks[1]
	if b.Retries != 5 || b.Args["bash_command"] != "123" || dags[0].Tasks[0].Retries != 2 {
		t.Fatalf("merge/tag not applied: %+v", dags[0].Tasks)
	}
}

func TestDurationsAsSeconds(t *testing.T) {
	t.Parallel()
	dags, err := Load("d.yaml", []byte("dag_id: d\ntasks:\n  - {task_id: a, operator: noop, retry_delay: 30, execution_timeout: 1h30m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := dags[0].Tasks[0]; got.RetryDelay.D() != 30*time.Second || got.ExecutionTimeout.D() != 90*time.Minute {
		t.Fatalf("durations: %v %v", got.RetryDelay.D(), got.ExecutionTimeout.D())
	}
}

// TestTimetableArguments checks the mapping form of timetable: its type and
// CronTriggerTimetable's interval and run_immediately (a boolean or a
// duration, as Airflow's bool | timedelta).
func TestTimetableArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want *core.RunImmediately
	}{
		{"", nil},
		{"run_immediately: true", &core.RunImmediately{}},
		{"run_immediately: false", &core.RunImmediately{Never: true}},
		{"run_immediately: 30m", &core.RunImmediately{Within: core.Duration(30 * time.Minute)}},
		{"run_immediately: 1800", &core.RunImmediately{Within: core.Duration(30 * time.Minute)}},
	}
	for _, tc := range tests {
		doc := "dag_id: d\nschedule: '@hourly'\nstart_date: 2024-01-01\ntimetable:\n  type: CronTriggerTimetable\n  interval: 6h\n"
		if tc.yaml != "" {
			doc += "  " + tc.yaml + "\n"
		}
		dags, err := Load("d.yaml", []byte(doc+"tasks:\n  - {task_id: a, operator: noop}\n"))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		d := dags[0]
		if d.Timetable != "CronTriggerTimetable" || d.TimetableInterval.D() != 6*time.Hour || !cmp.Equal(d.RunImmediately, tc.want) {
			t.Errorf("%q: timetable %q interval %v run_immediately %+v; want CronTriggerTimetable 6h %+v",
				tc.yaml, d.Timetable, d.TimetableInterval.D(), d.RunImmediately, tc.want)
		}
	}
}
