package dagfile

import (
	"fmt"
	"github.com/weirflow/weir/internal/suggest"
	"slices"
	"sort"
	"strings"
)

// Problem is one thing wrong with a DAG file or a DAG: where it is (file,
// line and column when known) and which field (a path such as
// "tasks[2].retries").
type Problem struct {
	File      string
	Line, Col int    // 1-based; 0 when unknown (Go SDK DAGs)
	Path      string // field path; "" for the file or document as a whole
	Msg       string
}

// String formats the problem as "file:line:col: path: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
		}
		b.WriteString(": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is returned by LoadFile, Load and Validate: every problem found,
// in file order, one per line.
type Error struct {
	Problems  []Problem
	transient bool // see Transient
}

// Error lists the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// newError sorts and de-duplicates problems (a bad default_args value is
// found once per task) and returns nil when there are none.
func newError(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		key := fmt.Sprintf("%s:%d:%d:%s", p.File, p.Line, p.Col, p.Msg)
		if p.Line == 0 {
			key += p.Path
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return &Error{Problems: out}
}

// synonyms are other orchestrators' names for a field (Dagu's depends,
// GitHub Actions' needs, Airflow's upstream tasks), suggested before the
// closest spelling.
var synonyms = map[string]string{
	"upstream": "depends_on", "upstreams": "depends_on", "depends": "depends_on",
	"dependencies": "depends_on", "needs": "depends_on", "after": "depends_on",
}

// didYouMean returns ` (did you mean "x"?)` for the known name closest to s
// (or its synonym among them), or "" when none is close.
func didYouMean(s string, known []string) string {
	if alt, ok := synonyms[s]; ok && slices.Contains(known, alt) {
		return fmt.Sprintf(" (did you mean %q?)", alt)
	}
	if best, ok := suggest.Closest(s, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}
