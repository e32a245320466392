package template

import (
	"regexp"
	"strings"
	"sync"
)

// goAction matches an action written in Go template syntax: one that
// starts with a field or variable ({{ .ds }}, {{ $x }}), a Go keyword
// ({{ if ... }}, {{ range ... }}, {{ end }}) or a Go function called Go's
// way, with its arguments after a space ({{ xcom_pull "a" }}).
var goAction = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\{\{-?\s*(\.|\$|(if|else|end|range|with|define|template|block|break|continue|len|index|printf|print|println|not|and|or|eq|ne|lt|le|gt|ge|xcom_pull|xcom_pull_key|json|tojson|shquote)(\s|-?\}\}))`)
})

// action matches the start of any {{ }} action.
var action = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{-?\s*`) })

// LooksGo reports whether template s is written in Go template syntax
// (an action goAction matches).
func LooksGo(s string) bool { return goAction().MatchString(s) }

// LooksJinja reports whether template s is written in Jinja: it has a
// {% statement %} or {# comment #}, or an action that is not Go syntax
// ({{ ds }}, {{ params.x }}).
func LooksJinja(s string) bool {
	if strings.Contains(s, "{%") || (strings.Contains(s, "{#") && strings.Contains(s, "#}")) {
		return true
	}
	return len(action().FindAllStringIndex(s, -1)) > len(goAction().FindAllStringIndex(s, -1))
}
