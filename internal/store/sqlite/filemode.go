package sqlite

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/weirflow/weir/internal/secrets"
)

// FileMode is the permission of the database file and its -wal and -shm
// companions: they hold connection secrets (encrypted), password hashes and
// task state, so only the owner may read them.
const FileMode fs.FileMode = 0o600

// secureFiles creates the database file with FileMode when it does not
// exist (SQLite then gives -wal and -shm the same mode) and tightens the
// database file and its companions when they exist with looser modes,
// logging each one it tightens.
func secureFiles(path string, log *slog.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, FileMode) //nolint:gosec // the configured database path
	if err != nil {
		return fmt.Errorf("create sqlite database %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create sqlite database %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := secrets.Tighten(p, FileMode, log); err != nil {
			return err
		}
	}
	return nil
}
