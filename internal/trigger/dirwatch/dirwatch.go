// Package dirwatch holds the directory watcher: it reports each file that
// appears or changes in a local folder (matching a glob, optionally in
// subfolders) as an asset event, once, in order of modification.
package dirwatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/listwatch"
)

// Type is the directory watcher. kwargs: {"path": "/data/landing",
// "glob": "*.csv", "recursive": true, "min_age": "10s"} and the listing
// watchers' route, max_items, partition_key and poll_interval.
var Type = trigger.Type{
	Name:        "directory",
	Summary:     "watches a local folder: an event for each file that appears or changes, once, oldest first",
	New:         newWatcher,
	Uses:        trigger.UseWatcher,
	CheckCursor: listwatch.CheckCursor,
}

// Payload is the event of one file.
type Payload struct {
	Path     string    `json:"path"` // absolute
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

type dirWatcher struct {
	root      string
	glob      string
	recursive bool
	opt       listwatch.Options
	interval  time.Duration
}

func newWatcher(raw json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		Path      *string `json:"path"`
		Glob      *string `json:"glob"`
		Recursive bool    `json:"recursive"`
		listwatch.Kwargs
	}
	if err := trigger.DecodeKwargs(raw, &k); err != nil {
		return nil, err
	}
	w := &dirWatcher{glob: "*", recursive: k.Recursive}
	switch {
	case k.Path == nil || *k.Path == "":
		return nil, trigger.Invalid("path", "is required (the absolute path of the folder to watch)")
	case !filepath.IsAbs(*k.Path):
		return nil, trigger.Invalid("path", "must be absolute (the triggerer's working folder is not the DAG's), got %q", *k.Path)
	case strings.ContainsAny(*k.Path, `*?[`):
		return nil, trigger.Invalid("path", "must be a folder, not a glob (put the pattern in glob), got %q", *k.Path)
	}
	if k.Glob != nil {
		if _, err := filepath.Match(*k.Glob, ""); err != nil || *k.Glob == "" || strings.Contains(*k.Glob, "/") {
			return nil, trigger.Invalid("glob", "must be a glob of file names such as \"*.csv\" (no '/': recursive goes into subfolders), got %q", *k.Glob)
		}
		w.glob = *k.Glob
	}
	var err error
	if w.opt, w.interval, err = k.Options(0); err != nil {
		return nil, err
	}
	w.root = filepath.Clean(*k.Path)
	return w, nil
}

func (w *dirWatcher) Run(ctx context.Context, rt *trigger.Runtime) error {
	return listwatch.Run(ctx, rt, w.interval, w.opt, w.list)
}

// list walks the folder (and its subfolders when recursive) and emits each
// regular file whose name matches the glob. A file's time is the later of
// its modification and status-change times, so that a file moved into the
// folder (which keeps its old modification time) is new too. Names that
// start with '.' match only a glob that does (a temporary file of a copy
// in progress is hidden, as in a shell). Links are not followed, but for
// the folder itself; paths in events are under the folder as written.
func (w *dirWatcher) list(ctx context.Context, emit func(*listwatch.Item)) error {
	root, err := filepath.EvalSymlinks(w.root) // path may be a link to the folder
	if err != nil {
		return fmt.Errorf("watch folder %s: %w", w.root, err)
	}
	if fi, err := os.Stat(root); err != nil {
		return fmt.Errorf("watch folder %s: %w", w.root, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("watch folder %s: it is not a folder", w.root)
	}
	hidden := strings.HasPrefix(w.glob, ".")
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != root { // removed while listing
				return nil
			}
			return fmt.Errorf("list folder: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (!w.recursive || (strings.HasPrefix(d.Name(), ".") && !hidden)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || (strings.HasPrefix(d.Name(), ".") && !hidden) {
			return nil
		}
		if ok, _ := filepath.Match(w.glob, d.Name()); !ok {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return fmt.Errorf("list folder: %w", err)
		}
		rel, _ := filepath.Rel(root, p)
		emit(&listwatch.Item{
			Key:      filepath.ToSlash(rel),
			Modified: changed(fi),
			Payload:  Payload{Path: filepath.Join(w.root, rel), Name: d.Name(), Size: fi.Size(), Modified: fi.ModTime().UTC()},
		})
		return nil
	})
}
