package template

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/weirflow/weir/internal/core"
)

func TestRenderJinja(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	ctx := Context(run, ti, map[string]any{"region": "us", "limit": 10, "name": "it's"})
	ctx, _ = WithVariables(ctx, map[string]string{"bucket": "b1"}, map[string]string{"cfg": `{"n":2}`})
	funcs := Funcs{Syntax: core.TemplateJinja, XComPull: func(taskID, key string) (any, error) {
		if taskID == "missing" {
			return nil, errors.New("no xcom for task missing")
		}
		return map[string]any{"task": taskID, "key": key}, nil
	}}
	tests := []renderCase{
		{in: "plain text", want: "plain text"},
		{in: "{{ ds }} {{ ds_nodash }} {{ ts }} {{ ts_nodash }}", want: "2024-03-09 20240309 2024-03-09T00:00:00+00:00 20240309T000000"},
		{in: "{{ logical_date }} {{ data_interval_end }}", want: "2024-03-09T00:00:00+00:00 2024-03-10T00:00:00+00:00"},
		{in: "{{ logical_date.year }}-{{ logical_date.month }} {{ data_interval_end.strftime('%Y/%m/%d') }}", want: "2024-3 2024/03/10"},
		{in: "{{ logical_date.isoformat() }}", want: "2024-03-09T00:00:00+00:00"},
		{in: "{{ logical_date | ds }} {{ data_interval_end | ds_nodash }} {{ logical_date | ts }}", want: "2024-03-09 20240310 2024-03-09T00:00:00+00:00"},
		{in: "{{ macros.ds_add(ds, 7) }} {{ macros.ds_add(ds, -9) }}", want: "2024-03-16 2024-02-29"},
		{in: "{{ macros.ds_format(ds, '%Y-%m-%d', '%d/%m/%y') }}", want: "09/03/24"},
		{in: "{{ run_id }} {{ dag_run.run_type }} {{ dag_run.conf.region }}", want: "scheduled__2024-03-09T00:00:00+00:00 scheduled eu"},
		{in: "{{ ti.try_number }}/{{ task_instance.max_tries }} {{ ti.task_id }}[{{ map_index }}]", want: "3/4 load[2]"},
		{in: "{{ params.region }} {{ params['limit'] + 1 }} {{ map_args.n }}", want: "eu 11 7"},
		{in: "{{ ti.xcom_pull(task_ids='extract').task }} {{ ti.xcom_pull('extract', key='rows').key }}", want: "extract rows"},
		{in: "{{ ti.xcom_pull(task_ids=['a', 'b']) | length }}", want: "2"},
		{in: "{{ var.value.bucket }} {{ var.json.cfg.n }}", want: "b1 2"},
		{in: "echo {{ params.name | shquote }}", want: `echo 'it'\''s'`},
		{in: "{{ params | tojson }}", want: `{"extra":1,"limit":10,"name":"it\u0027s","region":"eu"}`},
		{in: "{% for k in ['a', 'b'] %}{{ k | upper }}{% if not loop.last %},{% endif %}{% endfor %}", want: "A,B"},
		{in: "{% set n = params.limit * 2 %}{{ n }}", want: "20"},
		{in: "{{ params.nope | default('eu') }} {{ params.get('nope', 'x') }} {% if params.nope is defined %}y{% else %}n{% endif %}", want: "eu x n"},
		{in: "{{ params.nope }}", errPart: "nope"},
		{in: "{{ nope }}", errPart: "nope"},
		{in: "{{ ds ", errPart: "invalid template"},
		{in: "{{ .ds }}", errPart: "looks like Go template syntax"},
		{in: "{% include '/etc/passwd' %}", errPart: "{% include %} is not allowed"},
		{in: "{% import 'x' as y %}", errPart: "{% import %} is not allowed"},
		{in: "{% extends 'base' %}", errPart: "{% extends %} is not allowed"},
		{in: "{% trans %}hi{% endtrans %}", errPart: "{% trans %} is not allowed: Weir has no translations"},
		{in: "{{ ti.xcom_pull(task_ids='missing') }}", errPart: "template: line 1: no xcom for task missing"},
		{in: "line 1\n{{ params.nope }}", errPart: "template: line 2: attribute 'nope' not found"},
		{in: "{{ nope }}", errPart: `template: line 1: unknown name "nope"`},
		{in: "{{ macros.ds_add('x', 1) }}", errPart: `template: line 1: macros.ds_add: "x" is not a YYYY-MM-DD date`},
		{in: "{{ ti.xcom_pull(dag_id='x') }}", errPart: "unsupported argument dag_id"},
		{in: "{{ ds | ts }}", errPart: "filter ts takes a timestamp (logical_date, data_interval_start, ...), not a string"},
		{in: "{{ logical_date.strftime('%Q') }}", errPart: "unsupported strftime directive %Q"},
		// More of Airflow's macros, and pendulum's add and subtract.
		{in: "{{ logical_date.add(days=1) | ds }} {{ logical_date.subtract(weeks=1, hours=2) }} {{ data_interval_end.add(months=1, minutes=5) | ts }}",
			want: "2024-03-10 2024-03-01T22:00:00+00:00 2024-04-10T00:05:00+00:00"},
		{in: "{{ macros.datetime_diff_for_humans(data_interval_end, data_interval_start) }}, {{ macros.datetime_diff_for_humans(logical_date, since=data_interval_end.add(days=20)) }}",
			want: "1 day after, 3 weeks before"},
		{in: "{{ macros.uuid.uuid4() | length }} {% if 0 <= macros.random() < 1 %}ok{% endif %} {{ macros.time.time() > 1700000000 }}", want: "36 ok True"},
		{in: "{{ logical_date.add(day=1) }}", errPart: "add has no unit day (years, months, weeks, days, hours, minutes, seconds are)"},
		{in: "{{ logical_date.subtract(1) }}", errPart: "subtract takes keyword arguments only"},
		{in: "{{ logical_date.add(days='x') }}", errPart: "add takes a whole number of days, not x"},
		{in: "{{ macros.datetime_diff_for_humans(ds) }}", errPart: "dt must be a timestamp"},
	}
	assertRenders(t, tests, ctx, funcs)
}

// A template renders in the syntax it is given: the same text is Jinja in
// one DAG and plain text or an error in another.
func TestRenderArgsJinja(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	ctx := Context(run, ti, nil)
	args := map[string]any{"sql": "SELECT '{{ ds }}'", "headers": map[string]any{"X-Try": "{{ ti.try_number }}"}, "data": []any{"{% if true %}yes{% endif %}"}}
	got, err := RenderArgs(args, ctx, Funcs{Syntax: core.TemplateJinja})
	if err != nil {
		t.Fatal(err)
	}
	if got["sql"] != "SELECT '2024-03-09'" || got["headers"].(map[string]any)["X-Try"] != "3" || got["data"].([]any)[0] != "yes" {
		t.Errorf("RenderArgs(jinja) = %v", got)
	}
	if _, err := RenderArgs(args, ctx, Funcs{}); err == nil || !strings.Contains(err.Error(), "headers.X-Try") {
		t.Errorf("RenderArgs(go) of Jinja templates = %v, want an error naming headers.X-Try", err)
	}
}

func TestJinjaVariableRefs(t *testing.T) {
	t.Parallel()
	refs := VariableRefs(map[string]any{
		"a": "{{ var.value.bucket }}/{{ var.json.cfg.path }}",
		"b": []any{"{% if var.value.flag %}{{ var.value['region'] }}{% endif %}"},
		"c": "{{ .var.value.legacy }}",
		"d": "{{ var.value.get('env', 'dev') }} {{ var.json.get('limits', {}).cpu }} {{ var.value.get('bucket', var.value.fallback) }}",
		"e": "{{ var.value.get('owner') }}", // no default: required, as Airflow's raises
	})
	if strings.Join(refs.Values, ",") != "bucket,env,fallback,flag,legacy,owner,region" || strings.Join(refs.JSONs, ",") != "cfg,limits" {
		t.Errorf("VariableRefs = %+v", refs)
	}
	// Read only with a default: env and limits; bucket is also read without.
	if want := map[string]bool{"value.env": true, "json.limits": true}; !maps.Equal(refs.Optional, want) {
		t.Errorf("optional = %v, want %v", refs.Optional, want)
	}
}

// Airflow's {{ var.value.get('k', default) }}: the variable when it exists
// (the worker leaves a missing one out of the context), else the default.
func TestJinjaVariableWithDefault(t *testing.T) {
	t.Parallel()
	args := map[string]any{"bash_command": "{{ var.value.get('env', 'dev') }}/{{ var.value.get('region', 'eu') }}/{{ var.json.get('cfg', {'n': 1}).n }}"}
	ctx, err := WithVariables(map[string]any{}, map[string]string{"region": "us"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderArgs(args, ctx, Funcs{Syntax: core.TemplateJinja})
	if err != nil {
		t.Fatal(err)
	}
	if got := out["bash_command"]; got != "dev/us/1" {
		t.Errorf("rendered %q, want dev/us/1", got)
	}
	// Jinja's lowercase none is None (a default of none, a test of it).
	none := map[string]any{"x": "{% if var.value.get('missing', none) is none %}yes{% else %}no{% endif %} {{ none is none }}"}
	if out, err := RenderArgs(none, ctx, Funcs{Syntax: core.TemplateJinja}); err != nil || out["x"] != "yes True" {
		t.Errorf("rendered %v, %v; want yes True", out["x"], err)
	}
	if err := Check(core.TemplateJinja, "bash_command", args["bash_command"].(string), nil); err != nil {
		t.Errorf("Check: %v", err)
	}
	for tmpl, want := range map[string]string{
		"{{ var.value.get(params.k, 'd') }}":        "var.value.get needs the variable's key as a string literal",
		"{{ var.value.get('k', default_var='d') }}": "var.value.get takes its default as the second argument",
	} {
		if err := Check(core.TemplateJinja, "f", tmpl, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want %q", tmpl, err, want)
		}
	}
}

// Check finds an unknown name in a Jinja template when the DAG is loaded;
// names the template binds, globals and methods are not unknown.
func TestCheckJinja(t *testing.T) {
	t.Parallel()
	tests := []struct{ tmpl, want string }{
		{tmpl: "{{ ds }} {{ params.anything.deep }} {{ conf.x }} {{ var.value.k }} {{ map_args.n }}"},
		{tmpl: "{% for e in triggering_asset_events %}{{ e.uri }} {{ loop.index }}{% endfor %}"},
		{tmpl: "{% set n = 2 %}{% set a = n %}{{ n + a }}{% with x = ds %}{{ x }}{% endwith %}"},
		{tmpl: "{% macro m(v, w=1) %}{{ v }}{{ w }}{% endmacro %}{{ m(ds) }}"},
		{tmpl: "{{ ds.upper() }} {{ params.items() }} {{ logical_date.strftime('%Y') }} {{ range(3) | list }} {{ dag_run.conf.get('x') }}"},
		{tmpl: "{{ ti.xcom_pull(task_ids='a') }} {{ task_instance.try_number }} {{ macros.ds_add(ds, 1) }}"},
		{tmpl: "{{ triggering_asset_events[0].uri }} {{ params[ds] }}"},
		{tmpl: "{{ parms.x }}", want: "unknown name parms"},
		{tmpl: "{{ ti.try }}", want: "unknown name ti.try"},
		{tmpl: "{{ dag_run['run_typ'] }}", want: "unknown name dag_run.run_typ"},
		{tmpl: "{{ logical_date.yr }}", want: "unknown name logical_date.yr"},
		{tmpl: "{{ ds.year }}", want: `ds is a string: it has no field "year"`},
		{tmpl: "{% if ds %}{{ nope }}{% endif %}", want: "unknown name nope"},
		{tmpl: "{% for x in nope %}{% endfor %}", want: "unknown name nope"},
		{tmpl: "{{ macros.ds_ad(ds, 1) }}", want: "unknown name macros.ds_ad"},
		{tmpl: "{{ params[nope] }}", want: "unknown name nope"},
		{tmpl: "{{ ds | nofilter }}", want: `unknown filter "nofilter" at line 1`},
		{tmpl: "{% if ds is nottest %}{% endif %}", want: `unknown test "nottest"`},
		{tmpl: "{{ ds | upper | shquote }} {% if params.x is defined %}{% endif %} {{ logical_date | ds }}"},
		// The statements gonja keeps unexported: set's value and block body,
		// with's values and body, a filter section's filters and body.
		{tmpl: "{% set x %}{{ ds }}-{{ params.a }}{% endset %}{% with y = ds %}{{ x }}{{ y }}{{ run_id }}{% endwith %}" +
			"{% filter upper %}{{ ds_nodash }}{% endfilter %}{% set z = macros.ds_add(ds, 1) %}{{ z }}"},
		{tmpl: "{{ logical_date.add(days=1) }} {{ macros.uuid.uuid4() }} {{ macros.random() }} {{ macros.time.time() }} {{ macros.datetime_diff_for_humans(logical_date) }}"},
		{tmpl: "{{ macros.uuid.uuid5() }}", want: "unknown name macros.uuid.uuid5"},
		{tmpl: "{{ logical_date.plus(days=1) }}", want: "unknown name logical_date.plus"},
		{tmpl: "{% set x %}{{ dss }}{% endset %}{{ x }}", want: "unknown name dss"},
		{tmpl: "{% set x = parms.a %}{{ x }}", want: "unknown name parms"},
		{tmpl: "{% with y = ti.try %}{{ y }}{% endwith %}", want: "unknown name ti.try"},
		{tmpl: "{% with y = 1 %}{{ y }}{{ ts_nodsh }}{% endwith %}", want: "unknown name ts_nodsh"},
		{tmpl: "{% filter upper %}{{ logical_date.yr }}{% endfilter %}", want: "unknown name logical_date.yr"},
		{tmpl: "{% filter upcase %}{{ ds }}{% endfilter %}", want: `unknown filter "upcase" at line 1`},
		{tmpl: "{% set x %}{% with y = 1 %}{% filter upper %}{{ nope }}{% endfilter %}{% endwith %}{% endset %}", want: "unknown name nope"},
	}
	for _, tc := range tests {
		err := Check(core.TemplateJinja, "f", tc.tmpl, nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%q) = %v, want accepted", tc.tmpl, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Check(%q) = %v, want %q", tc.tmpl, err, tc.want)
		}
	}
}

// A Jinja bash command that prints trigger data without | shquote is
// found, with its position.
func TestUnquotedTriggerDataJinja(t *testing.T) {
	t.Parallel()
	got := UnquotedTriggerData(core.TemplateJinja, "echo {{ params.a }} {{ params.b | shquote }}\n{% if conf.x %}{{ dag_run.conf.y | upper }}{% endif %} {{ ds }}")
	want := []string{"{{ params.a }} at line 1, column 6", "{{ dag_run.conf.y }} at line 2, column 16"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("UnquotedTriggerData = %q, want %q", got, want)
	}
}

// A Weir function's error is the render error's cause, as in Go syntax.
func TestJinjaErrorWrapsCause(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	_, err := Render("{{ ti.xcom_pull(task_ids='a') }}", Context(run, ti, nil), Funcs{Syntax: core.TemplateJinja})
	if !errors.Is(err, errNoXCom) || err.Error() != "template: line 1: "+errNoXCom.Error() {
		t.Fatalf("error = %v, want %v at line 1", err, errNoXCom)
	}
}

// macros.datetime_diff_for_humans words the distance from now (ago, in)
// or from since (before, after) in its largest whole unit, as pendulum.
func TestDiffForHumans(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *exec.Value { return exec.AsValue(Time{now.Add(d)}) }
	for _, c := range []struct {
		args *exec.VarArgs
		want string
	}{
		{&exec.VarArgs{Args: []*exec.Value{at(-3 * 24 * time.Hour)}}, "3 days ago"},
		{&exec.VarArgs{Args: []*exec.Value{at(2*time.Hour + 5*time.Minute)}}, "in 2 hours"},
		{&exec.VarArgs{Args: []*exec.Value{at(-5 * time.Second)}}, "a few seconds ago"},
		{&exec.VarArgs{Args: []*exec.Value{at(-400 * 24 * time.Hour)}}, "1 year ago"},
		{&exec.VarArgs{KwArgs: map[string]*exec.Value{"dt": at(0), "since": at(-90 * time.Second)}}, "1 minute after"},
		{&exec.VarArgs{Args: []*exec.Value{at(0), at(45 * 24 * time.Hour)}}, "1 month before"},
		{&exec.VarArgs{Args: []*exec.Value{at(-8 * 24 * time.Hour), exec.AsValue(nil)}}, "1 week ago"},
	} {
		if got, err := diffForHumans(c.args, now); err != nil || got != c.want {
			t.Errorf("diffForHumans(%v) = %q, %v; want %q", c.args, got, err, c.want)
		}
	}
}
