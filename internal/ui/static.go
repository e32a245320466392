package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
)

//go:embed static
var staticFS embed.FS

// assets are the embedded static files, each served under a path with its
// content hash ("/static/<hash>/app.css"), so a browser may cache it for a
// year: a changed file gets a new path.
type assets struct {
	files map[string]asset // by name
}

type asset struct {
	hash string
	body []byte
}

// loadAssets reads and hashes every embedded static file.
func loadAssets() (*assets, error) {
	a := &assets{files: map[string]asset{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		a.files[path.Base(p)] = asset{hash: hex.EncodeToString(sum[:6]), body: b}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: read embedded static files: %w", err)
	}
	return a, nil
}

// path returns the hashed URL of the named static file.
func (a *assets) path(name string) (string, error) {
	f, ok := a.files[name]
	if !ok {
		return "", fmt.Errorf("no static file %q is embedded", name)
	}
	return "/static/" + f.hash + "/" + name, nil
}

// serve answers GET /static/{hash}/{name}: the file with an immutable
// one-year cache when the hash is current, 404 otherwise.
func (a *assets) serve(w http.ResponseWriter, r *http.Request) {
	f, ok := a.files[r.PathValue("name")]
	if !ok || f.hash != r.PathValue("hash") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(r.PathValue("name"))))
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(f.body)
}
