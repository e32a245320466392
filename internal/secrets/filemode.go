package secrets

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// Tighten removes from an existing file or folder every permission bit
// beyond mode (e.g. a world-readable database made 0600), logging the path
// and its old mode when it changes anything. A missing path is left alone.
func Tighten(path string, mode fs.FileMode, log *slog.Logger) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check mode of %s: %w", path, err)
	}
	old := fi.Mode().Perm()
	if old&^mode == 0 {
		return nil
	}
	if err := os.Chmod(path, old&mode); err != nil {
		return fmt.Errorf("tighten mode of %s from %v to %v: %w", path, old, old&mode, err)
	}
	log.Warn("tightened the mode of a path others could read", "path", path, "was", old.String(), "now", (old & mode).String())
	return nil
}
