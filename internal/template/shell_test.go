package template

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, UnquotedTriggerData(tc.in)); diff != "" {
			t.Errorf("UnquotedTriggerData(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
