package api

import (
	"bytes"
	"html/template"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/weirflow/weir/internal/core"
)

// The docs page (/api/v2/docs) is rendered on the server from the OpenAPI
// document: plain HTML and inline CSS, no script and nothing fetched from
// elsewhere, so it works offline and behind a strict firewall (huma's
// default page loads Stoplight Elements from a CDN).

// docsOp is one operation as the docs page shows it.
type docsOp struct {
	Method, Path, ID, Summary, Description, Role string
	Params                                       []docsField
	Body                                         []docsField
	BodyType                                     string
	Responses                                    []string
}

// docsField is a parameter or a body field.
type docsField struct {
	Name, In, Type, Description string
	Required                    bool
}

// docsTag groups operations under one tag, in the document's order.
type docsTag struct {
	Name string
	Ops  []docsOp
}

// docsPage is parsed when first served, not at every weir process's start.
var docsPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} {{.Version}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:70rem;padding:1rem 2rem;color:#1d2330}
h2{border-bottom:1px solid #ccd;padding-bottom:.2rem;margin-top:2rem}
section{border:1px solid #dde;border-radius:6px;margin:.8rem 0;padding:.6rem .9rem}
code,.path{font-family:ui-monospace,monospace}.m{display:inline-block;min-width:4.2rem;font-weight:700}
.GET{color:#1a7f37}.POST{color:#0b5cad}.PUT,.PATCH{color:#9a6700}.DELETE{color:#c0362c}
table{border-collapse:collapse;margin:.3rem 0}td,th{border:1px solid #dde;padding:.15rem .5rem;text-align:left;vertical-align:top}
.muted{color:#667}nav a{margin-right:.8rem}
</style></head><body>
<h1>{{.Title}} <span class="muted">{{.Version}}</span></h1>
<p>{{.Description}} The machine-readable document is <a href="openapi.json">openapi.json</a> (also <a href="openapi.yaml">openapi.yaml</a>).
Authenticate with <code>Authorization: Bearer weir_...</code> or the session cookie of <code>POST /api/v2/auth/login</code>.</p>
<nav>{{range .Tags}}<a href="#{{.Name}}">{{.Name}}</a>{{end}}</nav>
{{range .Tags}}<h2 id="{{.Name}}">{{.Name}}</h2>
{{range .Ops}}<section id="{{.ID}}"><div><span class="m {{.Method}}">{{.Method}}</span> <span class="path">{{.Path}}</span> — {{.Summary}}
<span class="muted">({{if .Role}}role {{.Role}}{{else}}no login{{end}}; <code>{{.ID}}</code>)</span></div>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Params}}<table><tr><th>parameter</th><th>in</th><th>type</th><th>description</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code>{{if .Required}} *{{end}}</td><td>{{.In}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>{{end}}</table>{{end}}
{{if .BodyType}}<div>body: <code>{{.BodyType}}</code></div>{{end}}
{{if .Body}}<table><tr><th>field</th><th>type</th><th>description</th></tr>
{{range .Body}}<tr><td><code>{{.Name}}</code>{{if .Required}} *{{end}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>{{end}}</table>{{end}}
<div class="muted">answers: {{range $i, $r := .Responses}}{{if $i}}, {{end}}{{$r}}{{end}}</div></section>{{end}}{{end}}
</body></html>
`))
})

// docsHandler serves the docs page, rendered once from the API's OpenAPI
// document.
func (s *server) docsHandler() http.HandlerFunc {
	var once sync.Once
	var page []byte
	var err error
	return func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { page, err = renderDocs(s.api.OpenAPI()) })
		if err != nil {
			s.log.ErrorContext(r.Context(), "render the API docs page", "err", err)
			http.Error(w, "internal error; the api-server log has the details", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")
		_, _ = w.Write(page)
	}
}

// renderDocs renders the docs page of doc.
func renderDocs(doc *huma.OpenAPI) ([]byte, error) {
	reg := doc.Components.Schemas
	tags := map[string]*docsTag{}
	var order []string
	for _, p := range slices.Sorted(maps.Keys(doc.Paths)) {
		item := doc.Paths[p]
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			if tags[tag] == nil {
				tags[tag] = &docsTag{Name: tag}
				order = append(order, tag)
			}
			tags[tag].Ops = append(tags[tag].Ops, docsOperation(op, reg))
		}
	}
	slices.Sort(order)
	data := struct {
		Title, Version, Description string
		Tags                        []*docsTag
	}{doc.Info.Title, doc.Info.Version, doc.Info.Description, nil}
	for _, t := range order {
		data.Tags = append(data.Tags, tags[t])
	}
	var b bytes.Buffer
	err := docsPage().Execute(&b, data)
	return b.Bytes(), err
}

// docsOperation describes op: its parameters, its body's fields (one
// level) and its answers.
func docsOperation(op *huma.Operation, reg huma.Registry) docsOp {
	d := docsOp{Method: op.Method, Path: op.Path, ID: op.OperationID, Summary: op.Summary, Description: op.Description}
	if role, _ := op.Metadata[metaRole].(core.Role); role != core.RolePublic {
		d.Role = string(role)
	}
	for _, p := range op.Parameters {
		d.Params = append(d.Params, docsField{Name: p.Name, In: p.In, Type: typeName(p.Schema, reg),
			Description: p.Description, Required: p.Required})
	}
	if op.RequestBody != nil {
		for ct, mt := range op.RequestBody.Content {
			if mt.Schema == nil {
				continue
			}
			d.BodyType = ct
			sc := mt.Schema
			if sc.Ref != "" {
				d.BodyType += " " + strings.TrimPrefix(sc.Ref, "#/components/schemas/")
				sc = reg.SchemaFromRef(sc.Ref)
			}
			if sc == nil {
				continue
			}
			for _, n := range slices.Sorted(maps.Keys(sc.Properties)) {
				f := sc.Properties[n]
				d.Body = append(d.Body, docsField{Name: n, Type: typeName(f, reg), Description: f.Description,
					Required: slices.Contains(sc.Required, n)})
			}
		}
	}
	codes := make([]string, 0, len(op.Responses))
	for code, r := range op.Responses {
		codes = append(codes, code+" "+r.Description)
	}
	slices.Sort(codes)
	d.Responses = codes
	return d
}

// typeName is a schema's type as the page shows it: a component's name,
// "array of" its items, or its JSON type.
func typeName(sc *huma.Schema, reg huma.Registry) string {
	switch {
	case sc == nil:
		return "any"
	case sc.Ref != "":
		return strings.TrimPrefix(sc.Ref, "#/components/schemas/")
	case sc.Type == "array":
		return "array of " + typeName(sc.Items, reg)
	case sc.Type == "":
		return "any"
	case sc.Format != "":
		return sc.Type + " (" + sc.Format + ")"
	}
	return sc.Type
}
