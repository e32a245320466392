package ui

import (
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// gridHTML renders the grid's table. It is the UI's hot path (100 runs ×
// 50 tasks are 5,000 cells), so it is written here rather than in a
// template: the same markup, every text and attribute value escaped with
// html.EscapeString and every path segment with url.PathEscape, at a
// tenth of html/template's cost per cell (docs/benchmarks.md).
func gridHTML(g grid) string {
	if len(g.Runs) == 0 {
		return "<p>No runs yet.</p>\n"
	}
	var b strings.Builder
	b.Grow(len(g.Rows)*len(g.Runs)*400 + 4096)
	esc := html.EscapeString
	dag := "/dags/" + esc(pathEscape(g.DagID)) + "/runs/"
	b.WriteString(`<table class="grid" data-grid aria-labelledby="grid-title">` + "\n" + `<thead><tr><th scope="col">Task</th>` + "\n")
	for _, r := range g.Runs {
		s := stateOf(r.State)
		title := r.RunID + " · " + s.Label
		if r.PartitionKey != nil {
			title += " · partition " + *r.PartitionKey
		}
		if r.Duration != "" {
			title += " · " + r.Duration
		}
		b.WriteString(`<th scope="col" class="run"><a href="` + dag + esc(pathEscape(r.RunID)) + `" title="` + esc(title) +
			`" aria-label="run ` + esc(r.RunID) + ": " + esc(s.Label) + `"><span class="sq ` + esc(s.Class) + `" title="` + esc(s.Label) +
			`" role="img" aria-label="` + esc(s.Label) + `">` + s.Icon + `</span></a></th>`)
	}
	b.WriteString("\n</tr>\n")
	partitionRow(&b, g.Runs)
	b.WriteString("</thead>\n<tbody>\n")
	for ri, row := range g.Rows {
		task := esc(row.TaskID)
		b.WriteString(`<tr><th scope="row">` + task + "</th>\n")
		for ci, c := range row.Cells {
			if c.Missing {
				b.WriteString(`<td class="missing"><span class="sr">no instance</span></td>`)
				continue
			}
			s := stateOf(c.State)
			href := dag + esc(pathEscape(c.RunID))
			if c.Mapped {
				href += "?task_id=" + esc(url.QueryEscape(row.TaskID)) + "#task-" + esc(pathEscape(row.TaskID))
			} else {
				href += "/tasks/" + esc(pathEscape(row.TaskID))
			}
			what := s.Label
			if c.Mapped {
				what = c.Detail
			}
			title := row.TaskID + " · " + c.RunID + " · " + what
			if c.Duration != "" {
				title += " · " + c.Duration
			}
			label := row.TaskID + " in " + c.RunID + ": " + s.Label
			if c.Mapped {
				label += ", " + strconv.Itoa(c.Count) + " mapped"
			}
			b.WriteString(`<td><a class="cell" data-r="` + strconv.Itoa(ri) + `" data-c="` + strconv.Itoa(ci) + `" href="` + href +
				`" title="` + esc(title) + `" aria-label="` + esc(label) + `"><span class="sq ` + esc(s.Class) + `" aria-hidden="true">` +
				s.Icon + `</span>`)
			if c.Mapped {
				b.WriteString(`<span class="count">` + strconv.Itoa(c.Count) + `</span>`)
			}
			b.WriteString("</a></td>")
		}
		b.WriteString("\n</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	return b.String()
}

// partitionRow writes, when any run of the grid is for a partition, a
// header row with each run's partition key (shortened on screen, whole on
// hover and for screen readers).
func partitionRow(b *strings.Builder, runs []gridRun) {
	if !slices.ContainsFunc(runs, func(r gridRun) bool { return r.PartitionKey != nil }) {
		return
	}
	b.WriteString(`<tr class="partitions"><th scope="row">Partition</th>`)
	for _, r := range runs {
		if r.PartitionKey == nil {
			b.WriteString(`<td><span class="sr">none</span></td>`)
			continue
		}
		k := html.EscapeString(*r.PartitionKey)
		b.WriteString(`<td><span class="pk" title="` + k + `">` + k + `</span></td>`)
	}
	b.WriteString("\n</tr>\n")
}
