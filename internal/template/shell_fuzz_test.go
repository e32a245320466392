package template

import (
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

// FuzzUnquotedTriggerData: any template text, well-formed or not, is
// analysed without a panic, and every finding names its position.
func FuzzUnquotedTriggerData(f *testing.F) {
	for _, s := range []string{
		`echo "{{ .params.name }}"`, `{{ with .params }}{{ .x }}{{ end }}`, `{{ range $i, $v := .conf.l }}{{ $v }}{{ else }}{{ . }}{{ end }}`,
		`{{ $x := .params }}{{ $x.y | shquote }}`, `{{ (.dag_run).conf }}`, `{{ if .params.a }}{{ else if .conf.b }}{{ .conf.c }}{{ end }}`,
		`{{ define "t" }}{{ .params.x }}{{ end }}{{ template "t" . }}`, `{{ .params.x `, `{{/* c */}}`, `{{- .conf -}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		found := UnquotedTriggerData(core.TemplateGo, s)
		if len(found) == 0 || !strings.Contains(s, "{{") {
			return
		}
		for _, w := range found {
			if !strings.Contains(w, " at line ") {
				t.Errorf("finding %q names no position", w)
			}
		}
	})
}
