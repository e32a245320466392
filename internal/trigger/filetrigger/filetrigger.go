// Package filetrigger holds the file trigger: it fires once files matching
// a path or a glob exist (optionally of a minimum size), Airflow's
// FileSensor.
package filetrigger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weirflow/weir/internal/trigger"
)

// Type is the file trigger. kwargs: {"path": "/data/in/*.csv",
// "min_size": 1, "poke_interval": "30s"}.
var Type = trigger.Type{
	Name:    "file",
	Summary: "fires once regular files matching an absolute path or glob exist (optionally at least min_size bytes)",
	New:     newTrigger,
}

// fileTrigger is a built file trigger.
type fileTrigger struct {
	pattern  string
	minSize  int64
	interval time.Duration
}

func newTrigger(kwargs json.RawMessage) (trigger.Trigger, error) {
	var k struct {
		Path         *string `json:"path"`
		MinSize      *int64  `json:"min_size"`
		PokeInterval *string `json:"poke_interval"`
	}
	if err := trigger.DecodeKwargs(kwargs, &k); err != nil {
		return nil, err
	}
	switch {
	case k.Path == nil || *k.Path == "":
		return nil, trigger.Invalid("path", "is required (an absolute path or glob such as /data/in/*.csv)")
	case !filepath.IsAbs(*k.Path):
		return nil, trigger.Invalid("path", "must be absolute (the triggerer's working folder is not the DAG's), got %q", *k.Path)
	case k.MinSize != nil && *k.MinSize < 0:
		return nil, trigger.Invalid("min_size", "must be at least 0 bytes, got %d", *k.MinSize)
	}
	if _, err := filepath.Match(*k.Path, ""); err != nil {
		return nil, trigger.Invalid("path", "is not a valid glob (%v): %q", err, *k.Path)
	}
	interval, err := trigger.Interval("poke_interval", k.PokeInterval, trigger.DefaultPollInterval)
	if err != nil {
		return nil, err
	}
	t := &fileTrigger{pattern: filepath.Clean(*k.Path), interval: interval}
	if k.MinSize != nil {
		t.minSize = *k.MinSize
	}
	return t, nil
}

// File is one matching file in an event.
type File struct {
	Path  string    `json:"path"`
	Size  int64     `json:"size"`
	MTime time.Time `json:"mtime"`
}

// Payload is the file trigger's event.
type Payload struct {
	Files []File `json:"files"` // sorted by path, at most trigger.MaxListed
	Count int    `json:"count"` // how many files matched
}

func (f *fileTrigger) Run(ctx context.Context, rt *trigger.Runtime) error {
	return trigger.Poll(ctx, rt, f.interval, func(context.Context) (any, bool, error) {
		p, err := f.match()
		return p, err == nil && p.Count > 0, err
	})
}

// match lists the regular files matching the pattern that are large
// enough; filepath.Glob returns them sorted.
func (f *fileTrigger) match() (Payload, error) {
	paths, err := filepath.Glob(f.pattern)
	if err != nil {
		return Payload{}, trigger.Permanent(fmt.Errorf("glob %q: %w", f.pattern, err))
	}
	p := Payload{Files: []File{}}
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < f.minSize {
			continue // gone since the glob, a folder, or still too small
		}
		p.Count++
		if len(p.Files) < trigger.MaxListed {
			p.Files = append(p.Files, File{Path: path, Size: fi.Size(), MTime: fi.ModTime().UTC()})
		}
	}
	return p, nil
}
