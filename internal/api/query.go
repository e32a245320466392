package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
)

// strictQuery refuses a query parameter the operation does not take (400
// naming it and the ones it takes): a filter an Airflow client sends that
// Weir does not implement would otherwise be ignored, and the whole list
// answered. It also reads a list parameter either way Airflow clients send
// one, repeated (state=a&state=b) or comma-separated (state=a,b), into the
// form the operation parses.
func (s *server) strictQuery(ctx huma.Context, next func(huma.Context)) {
	r, _ := humago.Unwrap(ctx)
	if r == nil || r.URL.RawQuery == "" {
		next(ctx)
		return
	}
	q := r.URL.Query()
	declared := map[string]*huma.Param{}
	for _, p := range ctx.Operation().Parameters {
		if p.In == "query" {
			declared[p.Name] = p
		}
	}
	var unknown []string
	for name := range q {
		if declared[name] == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		takes := "none"
		if len(declared) > 0 {
			names := make([]string, 0, len(declared))
			for name := range declared {
				names = append(names, name)
			}
			slices.Sort(names)
			takes = strings.Join(names, ", ")
		}
		_ = huma.WriteErr(s.api, ctx, http.StatusBadRequest, fmt.Sprintf(
			"query parameter %s is not one %s %s takes (it takes: %s); nothing was done",
			strings.Join(quoteAll(unknown), ", "), ctx.Operation().Method, ctx.Operation().Path, takes))
		return
	}
	rewritten := false
	for name, p := range declared {
		if len(q[name]) == 0 || p.Schema == nil || p.Schema.Type != huma.TypeArray {
			continue
		}
		var values []string
		for _, v := range q[name] {
			values = append(values, strings.Split(v, ",")...)
		}
		if p.Explode != nil && *p.Explode {
			q[name] = values
		} else {
			q[name] = []string{strings.Join(values, ",")}
		}
		rewritten = true
	}
	if rewritten {
		r.URL.RawQuery = q.Encode()
	}
	next(ctx)
}

// quoteAll quotes each of names.
func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
