package config

import (
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
)

func TestAllowedRunIDPattern(t *testing.T) {
	t.Parallel()
	if got := Defaults(t.TempDir()).Scheduler.AllowedRunIDPattern; got != core.DefaultRunIDPattern {
		t.Errorf("default [scheduler] allowed_run_id_pattern = %q, want core.DefaultRunIDPattern %q", got, core.DefaultRunIDPattern)
	}
	_, err := Load(t.TempDir(), []string{"WEIR__SCHEDULER__ALLOWED_RUN_ID_PATTERN=[a-"})
	if err == nil || !strings.Contains(err.Error(), "[scheduler] allowed_run_id_pattern") {
		t.Errorf("a broken pattern: error %v, want one naming [scheduler] allowed_run_id_pattern", err)
	}
}
