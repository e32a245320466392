package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/weirflow/weir/internal/core"
)

// On-disk layout of FS. A key's segments become nested directories and its
// last segment a file named with objSuffix; "%" in a segment is written as
// "%25". An escaped name never contains "%" followed by anything but "25",
// so object files ("a%obj"), directories ("a") and temporary files
// (".%tmp-…") can never collide, whatever the keys: "a" and "a/b" can both
// exist.
const (
	objSuffix  = "%obj"
	tmpPattern = ".%tmp-*"
	nameMax    = 255 // longest file name (NAME_MAX on Linux)
	putRetries = 5   // attempts when a concurrent Delete prunes the directory being written to
)

// FS is a Store that keeps each object as a file under a root directory.
// A Put writes a temporary file in the object's directory, syncs it and
// renames it over the object, so a crash or a failed write leaves the old
// value (or none) and at worst a stray temporary file, which Get and List
// never see. Directories left empty by Delete are removed.
type FS struct {
	root string
}

// NewFS returns a filesystem store rooted at dir, which must be an absolute
// path; the directory is created (mode 0700) if missing. Objects are
// written with mode 0600.
func NewFS(dir string) (*FS, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%w: object store directory %q is not an absolute path", core.ErrInvalid, dir)
	}
	dir = filepath.Clean(dir)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%w: object store path %s is not a directory", core.ErrInvalid, dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create object store directory: %w", err)
	}
	return &FS{root: dir}, nil
}

// String names the store's location.
func (s *FS) String() string { return "file://" + s.root }

// Put stores data under key atomically.
func (s *FS) Put(ctx context.Context, key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("put object %q: %w", key, err)
		}
		err = s.writeAtomic(filepath.Dir(p), p, data)
		if err == nil {
			return nil
		}
		// A concurrent Delete may prune the directory between its
		// creation and the temporary file's: make it again.
		if !errors.Is(err, fs.ErrNotExist) || attempt == putRetries {
			return fmt.Errorf("put object %q: %w", key, err)
		}
	}
}

// writeAtomic writes data to a temporary file in dir and renames it to p.
func (s *FS) writeAtomic(dir, p string, data []byte) (err error) {
	if err := s.mkdirs(dir); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, tmpPattern)
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write temporary file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync temporary file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close temporary file: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("rename temporary file into place: %w", err)
	}
	return syncDir(dir)
}

// mkdirs creates dir and its missing parents below the root, syncing each
// parent that gained an entry so the new path survives a crash.
func (s *FS) mkdirs(dir string) error {
	rel, err := filepath.Rel(s.root, dir)
	if err != nil {
		return fmt.Errorf("object directory %s: %w", dir, err)
	}
	if rel == "." {
		return nil
	}
	cur := s.root
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		parent := cur
		cur = filepath.Join(cur, seg)
		err := os.Mkdir(cur, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("create directory: %w", err)
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	return nil
}

// Get returns the value under key.
func (s *FS) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("get object %q: %w", key, err)
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("get object %q: %w", key, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get object %q: %w", key, err)
	}
	return data, nil
}

// Delete removes the value under key, then the directories it leaves empty.
func (s *FS) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete object %q: %w", key, err)
	}
	err = os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete object %q: %w", key, err)
	}
	dir := filepath.Dir(p)
	if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete object %q: %w", key, err)
	}
	// Prune empty directories; a non-empty one (ENOTEMPTY) or one a
	// concurrent Delete already removed ends the walk. Put copes with a
	// directory vanishing under it.
	for dir != s.root {
		if os.Remove(dir) != nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	return nil
}

// List returns the keys starting with prefix, sorted.
func (s *FS) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	// Start at the deepest directory the prefix names in full.
	start := s.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		for _, seg := range strings.Split(prefix[:i], "/") {
			start = filepath.Join(start, escapeSegment(seg))
		}
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // no such prefix, or a folder a Delete removed while it was listed
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == s.root {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirKey, ok := unescapePath(rel)
			if !ok {
				return filepath.SkipDir
			}
			dirKey += "/"
			if !strings.HasPrefix(dirKey, prefix) && !strings.HasPrefix(prefix, dirKey) {
				return filepath.SkipDir
			}
			return nil
		}
		name, ok := strings.CutSuffix(rel, objSuffix)
		if !ok || !d.Type().IsRegular() {
			return nil // a temporary file, or not ours
		}
		if key, ok := unescapePath(name); ok && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list objects with prefix %q: %w", prefix, err)
	}
	sort.Strings(keys)
	return keys, nil
}

// path maps a validated key to its object file.
func (s *FS) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	segs := strings.Split(key, "/")
	parts := make([]string, 0, len(segs)+1)
	parts = append(parts, s.root)
	for i, seg := range segs {
		name := escapeSegment(seg)
		if i == len(segs)-1 {
			name += objSuffix
		}
		if len(name) > nameMax {
			return "", fmt.Errorf("%w: object key %q has a segment too long for a file name (%d bytes escaped; at most %d)",
				core.ErrInvalid, key, len(name), nameMax)
		}
		parts = append(parts, name)
	}
	return filepath.Join(parts...), nil
}

// escapeSegment writes "%" as "%25" so the names FS reserves stay free.
func escapeSegment(seg string) string { return strings.ReplaceAll(seg, "%", "%25") }

// unescapePath turns a relative path of escaped segments back into a key;
// false when a segment is not one escapeSegment could produce.
func unescapePath(rel string) (string, bool) {
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for i, seg := range segs {
		if strings.Count(seg, "%") != strings.Count(seg, "%25") {
			return "", false
		}
		segs[i] = strings.ReplaceAll(seg, "%25", "%")
	}
	return strings.Join(segs, "/"), true
}

// syncDir flushes a directory's entries (a rename or a new name in it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open directory to sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}
