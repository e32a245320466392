package template

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weirflow/weir/internal/core"
)

func testRun() (*core.DagRun, *core.TaskInstance) {
	ld := time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC)
	end := ld.Add(24 * time.Hour)
	run := &core.DagRun{DagID: "etl", RunID: "scheduled__2024-03-09T00:00:00+00:00", RunType: core.RunScheduled,
		LogicalDate: &ld, DataIntervalStart: &ld, DataIntervalEnd: &end, Conf: json.RawMessage(`{"region":"eu","extra":1}`)}
	ti := &core.TaskInstance{ID: "ti-1", DagID: "etl", RunID: run.RunID, TaskID: "load", MapIndex: 2, TryNumber: 3,
		MaxTries: 4, MapArgs: json.RawMessage(`{"n":7}`)}
	return run, ti
}

func TestRender(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	ctx := Context(run, ti, map[string]any{"region": "us", "limit": 10})
	funcs := Funcs{XComPull: func(taskID, key string) (any, error) {
		if taskID == "missing" {
			return nil, errors.New("no xcom for task missing")
		}
		return map[string]any{"task": taskID, "key": key, "list": []any{1.0, 2.0}}, nil
	}}
	tests := []renderCase{
		{in: "plain text", want: "plain text"},
		{in: "{{ .ds }} {{ .ds_nodash }}", want: "2024-03-09 20240309"},
		{in: "{{ .ts }}", want: "2024-03-09T00:00:00+00:00"},
		{in: "{{ .ts_nodash }}", want: "20240309T000000"},
		{in: "{{ .logical_date }}", want: "2024-03-09T00:00:00+00:00"},
		{in: `{{ .logical_date.Format "2006/01" }}`, want: "2024/03"},
		{in: "{{ .data_interval_start }}..{{ .data_interval_end }}", want: "2024-03-09T00:00:00+00:00..2024-03-10T00:00:00+00:00"},
		{in: "{{ .run_id }}", want: "scheduled__2024-03-09T00:00:00+00:00"},
		{in: "{{ .dag_id }}.{{ .task_id }}[{{ .map_index }}]", want: "etl.load[2]"},
		{in: "{{ .ti.try_number }}/{{ .ti.max_tries }}", want: "3/4"},
		{in: "{{ .params.region }} {{ .params.limit }} {{ .params.extra }}", want: "eu 10 1"},
		{in: "{{ .conf.region }}", want: "eu"},
		{in: "{{ .map_args.n }}", want: "7"},
		{in: "{{ .dag_run.run_type }}", want: "scheduled"},
		{in: `{{ (xcom_pull "extract").task }}`, want: "extract"},
		{in: `{{ (xcom_pull "extract").key }}`, want: "return_value"},
		{in: `{{ (xcom_pull_key "extract" "rows").key }}`, want: "rows"},
		{in: `{{ (xcom_pull "extract").list | json }}`, want: "[1,2]"},
		{in: `{{ tojson .params }}`, want: `{"extra":1,"limit":10,"region":"eu"}`},
		{in: "{{ .params.nope }}", errPart: `map has no entry for key "nope"`},
		{in: "{{ .nope }}", errPart: `map has no entry for key "nope"`},
		{in: "{{ .ds ", errPart: "invalid template"},
		{in: "{{ nofunc }}", errPart: `function "nofunc" not defined`},
		{in: `{{ xcom_pull "missing" }}`, errPart: "no xcom for task missing"},
	}
	assertRenders(t, tests, ctx, funcs)
}

// renderCase is a template, and what it renders to or a part of its error.
type renderCase struct{ in, want, errPart string }

// assertRenders renders each case over ctx with funcs.
func assertRenders(t *testing.T, tests []renderCase, ctx map[string]any, funcs Funcs) {
	t.Helper()
	for _, tc := range tests {
		got, err := Render(tc.in, ctx, funcs)
		if tc.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("Render(%q) = %q, %v, want an error containing %q", tc.in, got, err, tc.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("Render(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Render(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestXComPullUnavailable(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	_, err := Render(`{{ xcom_pull "a" }}`, Context(run, ti, nil), Funcs{})
	if !errors.Is(err, errNoXCom) {
		t.Fatalf("error = %v, want %v", err, errNoXCom)
	}
}

func TestContextFallbacks(t *testing.T) {
	t.Parallel()
	queued := time.Date(2024, 5, 1, 12, 30, 0, 0, time.FixedZone("X", 7200))
	run := &core.DagRun{DagID: "d", RunID: "manual__1", QueuedAt: queued, Conf: json.RawMessage(`[1,2]`)}
	ctx := Context(run, nil, nil)
	got, err := Render("{{ .ds }} {{ .ts }} {{ .data_interval_end }} {{ .map_index }} {{ len .conf }} {{ len .ti }}", ctx, Funcs{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "2024-05-01 2024-05-01T10:30:00+00:00 2024-05-01T10:30:00+00:00 -1 0 0"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestRenderArgs(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	ctx := Context(run, ti, nil)
	args := map[string]any{
		"bash_command": "echo {{ .ds }}",
		"retries":      3,
		"headers":      map[string]any{"X-Run": "{{ .run_id }}"},
		"data":         []any{"{{ .task_id }}", 1.5, map[string]any{"k": "{{ .map_index }}"}},
		"env":          map[string]string{"DS": "{{ .ds_nodash }}"},
		"list":         []string{"{{ .dag_id }}"},
	}
	got, err := RenderArgs(args, ctx, Funcs{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"bash_command": "echo 2024-03-09",
		"retries":      3,
		"headers":      map[string]any{"X-Run": run.RunID},
		"data":         []any{"load", 1.5, map[string]any{"k": "2"}},
		"env":          map[string]string{"DS": "20240309"},
		"list":         []string{"etl"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("RenderArgs mismatch (-want +got):\n%s", d)
	}
	if args["bash_command"] != "echo {{ .ds }}" {
		t.Fatal("RenderArgs modified its input")
	}
}

func TestRenderArgsErrorNamesField(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	args := map[string]any{"data": []any{"ok", map[string]any{"q": "{{ .params.missing }}"}}}
	_, err := RenderArgs(args, Context(run, ti, nil), Funcs{})
	if err == nil {
		t.Fatal("no error")
	}
	const want = `data[1].q:1:10: executing "data[1].q" at <.params.missing>: map has no entry for key "missing"`
	if err.Error() != want {
		t.Fatalf("error = %q\nwant    %q", err, want)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	if err := Check(core.TemplateGo, "bash_command", "echo {{ .ds }} {{ xcom_pull \"a\" | json }}", nil); err != nil {
		t.Fatalf("valid template: %v", err)
	}
	err := Check(core.TemplateGo, "bash_command", "echo {{ .ds }", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "bash_command: invalid template: ") {
		t.Fatalf("error = %v", err)
	}
}

// Check finds, at load time, a name the task context does not have; free
// mappings (params, conf, map_args, variables) and a timestamp's methods
// take any name, and a name inside range or with is the element's.
func TestCheckNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl string
		want string // "" = accepted
	}{
		{tmpl: `{{ .ds }} {{ .params.anything }} {{ .conf.x.y }} {{ .map_args.file }}`},
		{tmpl: `{{ .ti.try_number }} {{ .dag_run.conf.k }} {{ .dag_run.logical_date.Year }}`},
		{tmpl: `{{ .logical_date.Format "2006-01" }} {{ .var.value.region }} {{ .var.json.cfg.a }}`},
		{tmpl: `{{ range .triggering_asset_events }}{{ .partition_key }} {{ .anything }}{{ end }}`},
		{tmpl: `{{ with .params }}{{ .x }}{{ else }}{{ .ds }}{{ end }}`},
		{tmpl: `{{ if .params.x }}{{ xcom_pull "a" | json }}{{ end }}`},
		{tmpl: `{{ .parms.x }}`, want: "f: unknown name .parms in the template context (known here: conf, dag_id,"},
		{tmpl: `{{ if .params.x }}{{ .tii }}{{ end }}`, want: "unknown name .tii"},
		{tmpl: `{{ range .triggering_asset_events }}{{ $.dss }}{{ end }}`, want: "unknown name .dss"},
		{tmpl: `{{ with .conf }}{{ . }}{{ else }}{{ .dss }}{{ end }}`, want: "unknown name .dss"},
		{tmpl: `{{ .dag_run.confs }}`, want: "unknown name .dag_run.confs in the template context (known here: conf, dag_id, logical_date"},
		{tmpl: `{{ .var.values.x }}`, want: "unknown name .var.values in the template context (known here: json, value)"},
		{tmpl: `{{ .ti.try_number.x }}`, want: `f: .ti.try_number is a number: it has no field "x"`},
		{tmpl: `{{ .triggering_asset_events.asset }}`, want: `.triggering_asset_events is a list (read its items with range): it has no field "asset"`},
	}
	for _, tt := range tests {
		err := Check(core.TemplateGo, "f", tt.tmpl, nil)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%q) = %v, want accepted", tt.tmpl, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%q) = %v, want %q", tt.tmpl, err, tt.want)
		}
	}
}
