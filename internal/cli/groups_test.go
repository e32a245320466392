package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/cli"
)

// TestUnknownCommandsExitTwo: a ported cron job that calls a command Weir
// does not have fails loudly: an unknown or missing subcommand of any group
// exits 2 with the group's commands and a "did you mean" hint, as does a
// flag a command does not have or a wrong number of arguments, and changes
// nothing (no home is created).
func TestUnknownCommandsExitTwo(t *testing.T) {
	t.Parallel()
	home := t.TempDir() + "/never"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dags", "remove", "etl"}, `unknown command "remove" for "weir dags" (its commands: backfill, delete, list,`},
		{[]string{"state-store", "cleanup-task"}, `unknown command "cleanup-task" for "weir state-store"; did you mean cleanup-task-store?`},
		{[]string{"dag", "list"}, `unknown command "dag" for "weir"; did you mean dags?`},
		{[]string{"assets"}, `"weir assets" needs a command: add-to-alias, aliases, emit, events, list, materialize, show, triggering-events, watchers`},
		{[]string{"db", "upgrade"}, `unknown command "upgrade" for "weir db"`},
		{[]string{"dags", "tigger", "etl"}, `unknown command "tigger" for "weir dags"; did you mean trigger?`},
		{[]string{"assets", "watchers", "reset-curser", "a", "b"}, `received 3; did you mean weir assets watchers reset-cursor?`},
		{[]string{"dags", "list", "--bogus"}, `unknown flag: --bogus`},
		{[]string{"dags", "pause"}, `accepts 1 arg(s), received 0`},
	} {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), append(c.args, "--home", home), cli.Options{Stdout: &out, Stderr: &errOut, Environ: []string{}})
		if code != cli.ExitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("weir %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errOut.String(), cli.ExitUsage, c.want)
		}
	}
}
