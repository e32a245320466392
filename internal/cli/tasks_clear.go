package cli

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
)

// tasksClearCmd clears task instances so the scheduler runs them again, as
// `airflow tasks clear` and the REST API's clearTaskInstances: it lists
// what it would clear and asks before clearing, unless --yes.
func (a *app) tasksClearCmd() *cobra.Command {
	var (
		p          service.ClearParams
		yes        bool
		start, end string
	)
	cmd := &cobra.Command{
		Use:   "clear DAG_ID",
		Short: "Clear task instances so they run again (a new try; task state is deleted unless --keep-task-state)",
		Long: "Lists the task instances the selection clears and asks for confirmation (--yes skips the question;\n" +
			"--dry-run only lists). A cleared instance gets a new try in state none, its XCom is deleted, and so is\n" +
			"its task state unless --keep-task-state; a finished run goes back to queued.",
		Example: "  weir tasks clear etl --run-id manual__2026-01-01T00:00:00Z --only-failed\n" +
			"  weir tasks clear etl -t load -t report --dry-run",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.DagID = args[0]
			var err error
			if p.StartDate, err = parseDateFlag("--start-date", start); err != nil {
				return err
			}
			if p.EndDate, err = parseDateFlag("--end-date", end); err != nil {
				return err
			}
			return a.withBackend(cmd, func(b backend) error {
				out := cmd.OutOrStdout()
				dry := p
				dry.DryRun = true
				tis, err := b.Clear(cmd.Context(), dry)
				if err != nil {
					return err
				}
				if err := clearTable(out, tis); err != nil {
					return err
				}
				switch {
				case len(tis) == 0:
					fmt.Fprintln(out, "nothing to clear")
					return nil
				case p.DryRun:
					fmt.Fprintf(out, "would clear %d task instances (dry run: nothing changed)\n", len(tis))
					return nil
				case !yes && !confirm(cmd.InOrStdin(), out, fmt.Sprintf("Clear these %d task instances?", len(tis))):
					return fmt.Errorf("nothing cleared (answer y, or pass --yes to clear without asking)")
				}
				if tis, err = b.Clear(cmd.Context(), p); err != nil {
					return err
				}
				fmt.Fprintf(out, "cleared %d task instances\n", len(tis))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.RunID, "run-id", "", "only this run (default: every run of the DAG)")
	f.StringArrayVarP(&p.TaskIDs, "task-id", "t", nil, "only this task (repeatable; default: every task)")
	f.BoolVar(&p.OnlyFailed, "only-failed", false, "only failed and upstream_failed instances")
	f.BoolVar(&p.KeepTaskState, "keep-task-state", false, "keep the instances' task state (by default a clear deletes it)")
	f.BoolVar(&p.DryRun, "dry-run", false, "list what would be cleared; change nothing")
	f.BoolVarP(&yes, "yes", "y", false, "clear without asking for confirmation")
	f.BoolVarP(&p.Downstream, "downstream", "d", false, "also clear every task downstream of the -t tasks")
	f.StringVarP(&start, "start-date", "s", "", "only runs whose logical date is at or after this (2026-01-02 or RFC 3339, UTC)")
	f.StringVarP(&end, "end-date", "e", "", "only runs whose logical date is at or before this (2026-01-02 or RFC 3339, UTC)")
	return cmd
}

// parseDateFlag reads a date flag: "" = unset, a date (midnight UTC) or an
// RFC 3339 time.
func parseDateFlag(flag, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t, nil
		}
	}
	return nil, fmt.Errorf("%s %q: want a date such as 2026-01-02 or a time such as 2026-01-02T15:04:05Z", flag, s)
}

// clearTable prints the instances a clear selects.
func clearTable(w io.Writer, tis []core.TaskInstance) error {
	rows := make([][]string, len(tis))
	for i, ti := range tis {
		rows[i] = []string{ti.RunID, ti.TaskID, strconv.Itoa(ti.MapIndex), strconv.Itoa(ti.TryNumber), ti.State.String()}
	}
	return table(w, []string{"RUN_ID", "TASK_ID", "MAP_INDEX", "TRY", "STATE"}, rows)
}

// confirm asks question on out and reports whether the answer read from in
// is yes; no answer (end of input) is no.
func confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprintf(out, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
}
