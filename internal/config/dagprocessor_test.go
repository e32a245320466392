package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 13 finding 1: [dag_processor] bounds a DAG file's size and parse
// time by default, takes other values from the file and the environment,
// and refuses values that would switch a limit off.
func TestDagProcessorConfig(t *testing.T) {
	t.Parallel()
	cfg, err := Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.DagProcessor; d.MaxFileBytes != 1<<20 || d.DagFileProcessorTimeout.D() != 50*time.Second {
		t.Errorf("defaults = %+v, want 1 MiB and 50s", d)
	}

	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("[dag_processor]\nmax_file_bytes = 4096\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(home, []string{"WEIR__DAG_PROCESSOR__DAG_FILE_PROCESSOR_TIMEOUT=2m"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.DagProcessor; d.MaxFileBytes != 4096 || d.DagFileProcessorTimeout.D() != 2*time.Minute {
		t.Errorf("loaded = %+v", d)
	}

	_, err = Load(t.TempDir(), []string{
		"WEIR__DAG_PROCESSOR__MAX_FILE_BYTES=0",
		"WEIR__DAG_PROCESSOR__DAG_FILE_PROCESSOR_TIMEOUT=0s",
	})
	for _, w := range []string{
		"[dag_processor] max_file_bytes: must be at least 1, got 0",
		"[dag_processor] dag_file_processor_timeout: must be a positive duration",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not say %q", err, w)
		}
	}
}
