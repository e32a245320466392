package taskproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/sysfile"
)

// Earlier versions kept a file per record in the ledger's folder: a
// running group's (<pid>-<start>.group), a try's outcome
// (<ti>-<try>.outcome) and the exit file its shell wrote (<ti>-<try>.exit),
// written through a pool of spare files (<pid>-<start>-<n>-<m>.spare). A
// worker of this version started where one of those died still kills its
// groups and reports its outcomes, and removes its spares.

const (
	legacyGroupExt   = ".group"
	legacyOutcomeExt = ".outcome"
	legacySpareExt   = ".spare"
)

// legacyRecord is an earlier version's record of a running group, or of an
// outcome (the Outcome's fields then).
type legacyRecord struct {
	Group  process `json:"group"`
	Worker process `json:"worker"`
	Outcome
}

// killLegacyLeftovers calls kill with the groups dead workers of earlier
// versions recorded, and removes their records.
func killLegacyLeftovers(dir string, kill func(g, worker process)) error {
	return readLegacy(dir, legacyGroupExt, func(path string, rec legacyRecord) {
		kill(rec.Group, rec.Worker)
		_ = os.Remove(path) //nolint:gosec // G703: a record of the worker's own run folder
	})
}

// unreportedLegacy is Unreported for the outcomes earlier versions' dead
// workers recorded.
func (l *Ledger) unreportedLegacy() ([]Outcome, error) {
	var out []Outcome
	err := readLegacy(l.dir, legacyOutcomeExt, func(path string, rec legacyRecord) {
		o := rec.Outcome
		o.legacy = path
		if o.State == "" {
			if !exitedZero(o.ExitFile) {
				forgetLegacy(o)
				return
			}
			o.State = string(core.TISuccess)
		}
		out = append(out, o)
	})
	return out, err
}

// forgetLegacy removes an earlier version's outcome record, its exit file
// first: a record outliving it is at worst reported again (and refused),
// while an exit file outliving its record would stay forever.
func forgetLegacy(o Outcome) {
	if o.ExitFile != "" && filepath.Dir(o.ExitFile) == filepath.Dir(o.legacy) {
		_ = os.Remove(o.ExitFile)
	}
	_ = os.Remove(o.legacy)
}

// exitedZero reports whether a shell wrote exit status 0 to path.
func exitedZero(path string) bool {
	if path == "" {
		return false
	}
	b, err := sysfile.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == "0"
}

// readLegacy calls each with every record named *ext in dir whose worker
// is no longer alive; each error names its file.
func readLegacy(dir, ext string, each func(path string, rec legacyRecord)) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read task group folder: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var rec legacyRecord
		b, err := os.ReadFile(path) //nolint:gosec // G304: a file of the worker's own run folder
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("record %s: %w", path, err))
			continue
		}
		if !rec.Worker.alive() {
			each(path, rec)
		}
	}
	return errors.Join(errs...)
}

// removeDeadSpares removes the spare files of earlier versions' ledgers
// whose process is gone.
func removeDeadSpares(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read task group folder: %w", err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), legacySpareExt) && !ownerAlive(e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name())) //nolint:gosec // G703: a spare of the worker's own run folder
		}
	}
	return nil
}
