package trigger

import (
	"encoding/json"
	"fmt"
	"path"
)

// Routes is the route kwarg of a built-in watcher: watched asset name to
// a glob on an item's text (a column's, a field's). An item goes to the
// assets whose glob matches it; an asset the routes do not name gets
// nothing. Nil routes send every item to every watched asset.
type Routes map[string]string

// ParseRoutes checks the route kwarg (nil = not given) and that it comes
// with by, the kwarg naming what the globs match (given says whether it
// was).
func ParseRoutes(route map[string]string, by string, given bool) (Routes, error) {
	switch {
	case route == nil && !given:
		return nil, nil
	case route == nil:
		return nil, Invalid(by, "needs route (an object of asset name to a glob on its value)")
	case !given:
		return nil, Invalid("route", "needs %s (what the globs match)", by)
	case len(route) == 0:
		return nil, Invalid("route", "must name at least one asset")
	}
	for asset, glob := range route {
		if asset == "" {
			return nil, Invalid("route", "holds an empty asset name")
		}
		if _, err := path.Match(glob, ""); err != nil {
			return nil, Invalid("route", "holds %q for asset %q, which is not a valid glob", glob, asset)
		}
	}
	return Routes(route), nil
}

// Match reports whether asset gets an item whose routed text is s.
func (r Routes) Match(asset, s string) bool {
	if r == nil {
		return true
	}
	glob, ok := r[asset]
	if !ok {
		return false
	}
	ok, _ = path.Match(glob, s)
	return ok
}

// ValueText is a JSON-ready value as text, for routes and partition keys:
// a string as it is, null as "", anything else as its JSON.
func ValueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
