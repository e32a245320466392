package template

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weirflow/weir/internal/core"
)

// TestShellQuoteInBash renders hostile values through shquote into a real
// bash command: bash prints each value back unchanged and runs nothing.
func TestShellQuoteInBash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	values := []any{
		`"; touch ` + marker + `; echo "`,
		`'; touch ` + marker + `; echo '`,
		`$(touch ` + marker + `)`,
		"`touch " + marker + "`",
		"a\nb; touch " + marker,
		`\'\\'' $HOME * ~ !! {a,b}`,
		"",
		"plain",
	}
	for _, v := range values {
		conf, _ := json.Marshal(map[string]any{"name": v})
		run := &core.DagRun{DagID: "d", RunID: "r", Conf: conf}
		cmd, err := Render(`printf '%s' {{ .params.name | shquote }}`, Context(run, nil, nil), Funcs{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), "bash", "-c", cmd).Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", cmd, err)
		}
		if string(out) != v {
			t.Errorf("bash -c %q printed %q, want %q", cmd, out, v)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a quoted value ran a command")
	}
}

func TestShellQuoteValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   any
		want string
	}{
		{nil, `''`},
		{"it's", `'it'\''s'`},
		{10.0, `'10'`},
		{true, `'true'`},
		{[]any{"a", 1.0}, `'["a",1]'`},
		{map[string]any{"k": "v"}, `'{"k":"v"}'`},
	}
	for _, tc := range tests {
		if got, err := ShellQuote(tc.in); err != nil || got != tc.want {
			t.Errorf("ShellQuote(%#v) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestUnquotedTriggerData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{in: `echo hello`},
		{in: `echo {{ .ds }} {{ .run_id }} {{ .ti.try_number }}`},
		{in: `echo {{ .params.name | shquote }} {{ shquote .conf.x }}`},
		{in: `echo {{ index .params "name" | printf "%s!" | shquote }}`},
		{in: `echo "{{ .params.name }}"`, want: []string{"{{.params.name}} at line 1, column 10"}},
		{in: "echo ok\necho {{ .conf.x }}", want: []string{"{{.conf.x}} at line 2, column 9"}},
		{in: `{{ .dag_run.conf.x }}`, want: []string{"{{.dag_run.conf.x}} at line 1, column 4"}},
		{in: `{{ .dag_run.run_type }}`},
		{in: `{{ $.params.x }}`, want: []string{"{{$.params.x}} at line 1, column 4"}},
		{in: `{{ index .params "name" }}`, want: []string{`{{index .params "name"}} at line 1, column 4`}},
		{in: `{{ .params.name | shquote | printf "%s" }}`, want: []string{`{{.params.name | shquote | printf "%s"}} at line 1, column 4`}},
		{in: `{{ tojson .params }}`, want: []string{"{{tojson .params}} at line 1, column 4"}},
		{in: `{{ with .params }}{{ .name }}{{ end }}`, want: []string{"{{.name}} at line 1, column 22"}},
		{in: `{{ with .params }}{{ .name | shquote }}{{ end }}`},
		{in: `{{ range .conf.items }}{{ . }} {{ end }}`, want: []string{"{{.}} at line 1, column 27"}},
		{in: `{{ range .ti }}{{ . }}{{ end }}`},
		{in: `{{ $n := .params.name }}{{ $n }} {{ $n | shquote }}`, want: []string{"{{$n}} at line 1, column 28"}},
		{in: `{{ if .params.loud }}LOUD{{ end }}`},
		{in: `{{ if .ds }}{{ .params.x }}{{ end }}`, want: []string{"{{.params.x}} at line 1, column 16"}},
		{in: `{{ (.params).name }}`, want: []string{"{{(.params).name}} at line 1, column 4"}},
		{in: `{{ .params.x `}, // malformed: Check's business
		{in: `{{ if $x := .params.a }}{{ $x }}{{ end }}`, want: []string{"{{$x}} at line 1, column 28"}},
		{in: `{{ define "t" }}{{ . }}{{ end }}{{ template "t" .params.a }}`, want: []string{"{{.}} at line 1, column 20"}},
		{in: `{{ define "t" }}{{ . | shquote }}{{ end }}{{ template "t" .params.a }}`},
		{in: `{{ define "t" }}{{ .params.x }}{{ end }}{{ template "t" . }} {{ .conf.y }}`,
			want: []string{"{{.conf.y}} at line 1, column 65", "{{.params.x}} at line 1, column 20"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, UnquotedTriggerData(core.TemplateGo, tc.in)); diff != "" {
			t.Errorf("UnquotedTriggerData(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// TestEnv: a bash task reads trigger data from its environment, where no
// value can become shell syntax.
func TestEnv(t *testing.T) {
	t.Parallel()
	run, ti := testRun()
	run.Conf = json.RawMessage(`{"name":"\"; touch pwned; echo \"","n":3,"my-key":"a","MY_KEY":"b","nul":"a\u0000b"}`)
	part := "p1"
	run.PartitionKey = &part // a per-partition run
	events := []core.AssetEvent{{ID: 7, Name: "orders", URI: "s3://lake/orders", Extra: json.RawMessage(`{"key":"a.csv"}`),
		PartitionKey: &part, SourceKind: core.AssetSourceWatcher, SourceWatcher: "landing", Timestamp: *run.LogicalDate}}
	env := Env(WithEvents(Context(run, ti, map[string]any{"name": "world", "tags": []any{"x"}, "region": "eu"}), events, len(events)))
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	want := map[string]string{
		"WEIR_CONF":                `{"MY_KEY":"b","my-key":"a","n":3,"name":"\"; touch pwned; echo \"","nul":"a\u0000b"}`,
		"WEIR_PARAMS":              `{"MY_KEY":"b","my-key":"a","n":3,"name":"\"; touch pwned; echo \"","nul":"a\u0000b","region":"eu","tags":["x"]}`,
		"WEIR_PARAM_NAME":          `"; touch pwned; echo "`,
		"WEIR_PARAM_N":             "3",
		"WEIR_PARAM_REGION":        "eu",
		"WEIR_PARAM_TAGS":          `["x"]`,
		"WEIR_RUN_TYPE":            "scheduled",
		"WEIR_PARTITION_KEY":       "p1",
		"WEIR_LOGICAL_DATE":        "2024-03-09T00:00:00+00:00",
		"WEIR_DS":                  "2024-03-09",
		"WEIR_DATA_INTERVAL_START": "2024-03-09T00:00:00+00:00",
		"WEIR_DATA_INTERVAL_END":   "2024-03-10T00:00:00+00:00",
		"WEIR_TRIGGERING_ASSET_EVENTS": `[{"asset":"orders","extra":{"key":"a.csv"},"id":7,"partition_date":"","partition_key":"p1",` +
			`"source_callback_id":0,"source_dag_id":"","source_kind":"watcher","source_run_id":"","source_task_id":"","source_user":"","source_watcher":"landing","timestamp":"2024-03-09T00:00:00Z","uri":"s3://lake/orders"}]`,
		"WEIR_TRIGGERING_ASSET_EVENTS_TOTAL": "1",
		// my-key and MY_KEY both map to WEIR_PARAM_MY_KEY: neither is set.
		// nul holds a NUL byte, which no environment can carry.
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}

	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", "-c", `echo "Hello, $WEIR_PARAM_NAME!"`)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil || string(out) != "Hello, \"; touch pwned; echo \"!\n" {
		t.Errorf("bash printed %q (err %v)", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a value read from the environment ran a command")
	}
}
