// Package dagsource reads the file a DAG was loaded from, for the web UI's
// source view and the REST API's dagSources, and only a file inside the
// DAGs folder: neither reads anything else of the server's disk.
package dagsource

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MaxSize is how much of a DAG file Read returns.
const MaxSize = 1 << 20

// ErrNoSource is why a DAG's source cannot be shown (a Go DAG, no DAGs
// folder, a file outside it); its message is for the user.
var ErrNoSource = errors.New("no source")

// Read reads up to MaxSize bytes of the DAG file loc, which must
// resolve (symbolic links followed) to a file inside folder: it never
// reads anything else of the server's disk. truncated says the file is
// longer. Errors wrapping ErrNoSource say why there is nothing to show.
func Read(folder, loc string) (src string, truncated bool, err error) {
	switch {
	case strings.HasPrefix(loc, "go:"):
		return "", false, fmt.Errorf("this DAG is defined in Go code compiled into %s (%w)", strings.TrimPrefix(loc, "go:"), ErrNoSource)
	case loc == "":
		return "", false, fmt.Errorf("the DAG names no file (%w)", ErrNoSource)
	case folder == "":
		return "", false, fmt.Errorf("this server has no DAGs folder ([core] dags_folder) to read %s from (%w)", loc, ErrNoSource)
	}
	root, err := filepath.EvalSymlinks(folder)
	if err != nil {
		return "", false, fmt.Errorf("the DAGs folder %s is not readable here (%w)", folder, ErrNoSource)
	}
	file, err := filepath.EvalSymlinks(loc)
	if err != nil {
		return "", false, fmt.Errorf("%s is not on this server's disk; the DAG processor reads it elsewhere (%w)", loc, ErrNoSource)
	}
	if root, err = filepath.Abs(root); err != nil {
		return "", false, err
	}
	if file, err = filepath.Abs(file); err != nil {
		return "", false, err
	}
	if rel, err := filepath.Rel(root, file); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false, fmt.Errorf("%s is outside the DAGs folder %s, so it is not shown (%w)", loc, folder, ErrNoSource)
	}
	f, err := os.Open(file) //nolint:gosec // checked above: a file inside the DAGs folder
	if err != nil {
		return "", false, fmt.Errorf("open dag file %s: %w", file, err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return "", false, fmt.Errorf("read dag file %s: %w", file, err)
	}
	if len(b) > MaxSize {
		return string(b[:MaxSize]), true, nil
	}
	return string(b), false, nil
}
