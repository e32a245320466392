package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/tasklog"
)

// flakyLog is a log whose source is unavailable for its first reads.
type flakyLog struct {
	down  int // reads left that fail
	lines []string
}

func (f *flakyLog) LogRead(_ context.Context, _ tasklog.Key, offset int64) ([]byte, int64, error) {
	if f.down > 0 {
		f.down--
		return nil, offset, fmt.Errorf("get task log record: %w", core.ErrUnavailable)
	}
	if int(offset) < len(f.lines) {
		return []byte(f.lines[offset]), offset + 1, nil
	}
	return nil, offset, nil
}

// --follow waits out a short outage of the log's source (a database or an
// api-server restarting) and goes on printing, saying so once an outage
// (here one while reading, one while checking the try); without
// --follow the outage is the command's error.
func TestFollowRidesOutAnOutage(t *testing.T) {
	t.Parallel()
	run := func(follow bool) (string, string, error) {
		var out, errOut bytes.Buffer
		cmd := &cobra.Command{}
		cmd.SetContext(context.Background())
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		log := &flakyLog{down: 2, lines: []string{"first\n", "second\n"}}
		var active func(context.Context) (bool, error)
		if follow {
			checks := 0
			active = func(context.Context) (bool, error) {
				checks++
				if checks == 1 {
					return false, fmt.Errorf("get task instance: %w", core.ErrUnavailable)
				}
				return false, nil
			}
		}
		err := tailLog(cmd, log, tasklog.Key{}, active)
		return out.String(), errOut.String(), err
	}
	out, errOut, err := run(true)
	if err != nil || out != "first\nsecond\n" || strings.Count(errOut, "is unavailable") != 2 {
		t.Errorf("--follow through two outages: %q, stderr %q, %v; want both lines and a notice an outage", out, errOut, err)
	}
	if _, _, err := run(false); err == nil {
		t.Error("without --follow an unavailable source is not an error")
	}
}
