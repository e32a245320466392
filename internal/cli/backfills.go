package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
)

// dagsBackfillCmd is `weir dags backfill DAG_ID`, Airflow 3's: it creates
// a backfill whose runs the scheduler starts (docs/backfills.md).
func (a *app) dagsBackfillCmd() *cobra.Command {
	var (
		from, to, conf, reprocess string
		r                         runs.BackfillRequest
	)
	cmd := &cobra.Command{
		Use:   "backfill DAG_ID",
		Short: "Run a DAG over past logical dates: a backfill whose runs the scheduler starts, --max-active-runs at a time",
		Long: "Creates a backfill: a queued run of type backfill for every logical date of the DAG's schedule from\n" +
			"--from-date to --to-date (both included) that has no run yet, and, with --reprocess-behavior, clears\n" +
			"and reruns the finished runs it names (failed: failed runs; completed: failed and successful ones).\n" +
			"Runs still queued or running are never touched. The scheduler starts the backfill's runs oldest first\n" +
			"(newest first with --run-backwards), at most --max-active-runs at once, while the DAG is unpaused.\n" +
			"It returns at once: follow with `weir backfills get ID`, stop with `weir backfills cancel ID`.",
		Example: "  weir dags backfill etl --from-date 2026-01-01 --to-date 2026-01-30 --max-active-runs 3\n" +
			"  weir dags backfill etl --from-date 2026-01-01 --to-date 2026-01-30 --reprocess-behavior failed --dry-run",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r.DagID = args[0]
			f, err := requiredDate("--from-date", from)
			if err != nil {
				return err
			}
			t, err := requiredDate("--to-date", to)
			if err != nil {
				return err
			}
			r.From, r.To, r.Reprocess = f, t, core.ReprocessBehavior(reprocess)
			if r.MaxActiveRuns < 1 { // 0 would read as "unset" (the default) below
				return fmt.Errorf("--max-active-runs must be at least 1, got %d", r.MaxActiveRuns)
			}
			if conf != "" {
				r.DagRunConf = json.RawMessage(conf)
			}
			return a.withBackend(cmd, func(b backend) error {
				res, err := b.BackfillCreate(cmd.Context(), r)
				if err != nil {
					return err
				}
				return printBackfillPlan(cmd, b, r, res)
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&from, "from-date", "s", "", "first logical date, included (2026-01-02 or RFC 3339, UTC); required")
	f.StringVarP(&to, "to-date", "e", "", "last logical date, included (2026-01-02 or RFC 3339, UTC); required")
	f.IntVar(&r.MaxActiveRuns, "max-active-runs", runs.DefaultBackfillMaxActiveRuns, "how many of the backfill's runs may run at once")
	f.StringVar(&reprocess, "reprocess-behavior", "none", "dates that already have a finished run: none (keep it), failed (rerun failed runs), completed (rerun every finished run)")
	f.BoolVar(&r.RunBackwards, "run-backwards", false, "start the newest logical date first")
	f.StringVarP(&conf, "dag-run-conf", "c", "", "conf of every run, a JSON object")
	f.BoolVar(&r.DryRun, "dry-run", false, "list the logical dates and what would be done at each; change nothing")
	return cmd
}

// requiredDate parses a date flag that must be given.
func requiredDate(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%s is required (a date such as 2026-01-02 or a time such as 2026-01-02T15:04:05Z)", flag)
	}
	t, err := parseDateFlag(flag, s)
	if err != nil {
		return time.Time{}, err
	}
	return *t, nil
}

// printBackfillPlan prints what a backfill did (or would do) per date.
func printBackfillPlan(cmd *cobra.Command, be backend, r runs.BackfillRequest, res *service.BackfillResult) error {
	out := cmd.OutOrStdout()
	rows := make([][]string, len(res.Steps))
	todo := 0
	for i, st := range res.Steps {
		what := string(st.Action)
		if st.Reason != "" {
			what += " (" + st.Reason + ")"
		}
		if st.Action != runs.BackfillSkip {
			todo++
		}
		existing := "-"
		if st.Existing != nil {
			existing = st.Existing.RunID + " (" + string(st.Existing.State) + ")"
		}
		rows[i] = []string{st.Interval.Start.UTC().Format(time.RFC3339), what, existing}
	}
	if err := table(out, []string{"LOGICAL_DATE", "ACTION", "EXISTING_RUN"}, rows); err != nil {
		return err
	}
	if r.DryRun {
		fmt.Fprintf(out, "would run %d of %d logical dates (dry run: nothing changed)\n", todo, len(res.Steps))
		return nil
	}
	b := res.Backfill
	fmt.Fprintf(out, "created backfill %d of %s: %d runs to run, at most %d at once\n", b.ID, b.DagID, todo, b.MaxActiveRuns)
	warnPaused(cmd, be, b.DagID, "the backfill's runs wait")
	return nil
}

// backfillsCmd is `weir backfills`: list, get, pause, unpause and cancel
// backfills (airflowctl's backfills commands).
func (a *app) backfillsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "backfills", Short: "List, inspect, pause and cancel backfills (create one with `weir dags backfill`)"}
	var (
		dagID string
		pf    pageFlags
		out   output
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List backfills, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listThrough(a, cmd, &pf, func(ctx context.Context, b backend, pg store.Page) ([]core.Backfill, int, error) {
				return b.BackfillList(ctx, &store.BackfillListParams{DagID: dagID, Page: pg})
			}, func(list []core.Backfill) error { return printBackfills(cmd.OutOrStdout(), &out, list) })
		},
	}
	list.Flags().StringVarP(&dagID, "dag-id", "d", "", "only the backfills of this DAG")
	pf.add(list, "backfills", 50)
	out.add(list)

	var getOut output
	get := &cobra.Command{
		Use:   "get BACKFILL_ID",
		Short: "Show a backfill and how many of its runs are in each state",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := backfillID(args[0])
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(be backend) error {
				b, err := be.BackfillGet(cmd.Context(), id)
				if err != nil {
					return err
				}
				if err := printBackfills(cmd.OutOrStdout(), &getOut, []core.Backfill{*b}); err != nil || !getOut.isTable() {
					return err
				}
				return printBackfillRuns(cmd, be, id)
			})
		},
	}
	getOut.add(get)
	cmd.AddCommand(list, get,
		a.backfillActionCmd("pause", "Pause a backfill: its queued runs wait, running ones go on"),
		a.backfillActionCmd("unpause", "Unpause a backfill: its queued runs start again"),
		a.backfillActionCmd("cancel", "Cancel a backfill: its runs not started are marked failed, running ones finish"))
	return cmd
}

// backfillActionCmd is one of `weir backfills pause|unpause|cancel ID`.
func (a *app) backfillActionCmd(name, short string) *cobra.Command {
	return &cobra.Command{
		Use:   name + " BACKFILL_ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := backfillID(args[0])
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(be backend) error {
				b, err := be.BackfillAction(cmd.Context(), id, name)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "backfill %d of %s: %s\n", b.ID, b.DagID, backfillStatus(b))
				return nil
			})
		},
	}
}

func backfillID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("backfill id %q: want a positive number, as `weir backfills list` shows", s)
	}
	return id, nil
}

// backfillStatus says where a backfill stands, in words.
func backfillStatus(b *core.Backfill) string {
	switch {
	case b.CompletedAt != nil:
		return "completed"
	case b.IsPaused:
		return "paused"
	}
	return "running"
}

func printBackfills(w io.Writer, out *output, list []core.Backfill) error {
	rows := make([][]string, len(list))
	for i := range list {
		b := &list[i]
		rows[i] = []string{strconv.FormatInt(b.ID, 10), b.DagID, b.FromDate.Format(time.RFC3339), b.ToDate.Format(time.RFC3339),
			string(b.ReprocessBehavior), strconv.Itoa(b.MaxActiveRuns), backfillStatus(b), fmtTime(&b.CreatedAt), fmtTime(b.CompletedAt)}
	}
	return out.print(w, nonNilList(list), []string{"ID", "DAG_ID", "FROM_DATE", "TO_DATE", "REPROCESS", "MAX_ACTIVE_RUNS", "STATUS",
		"CREATED", "COMPLETED"}, rows)
}

// printBackfillRuns prints how many of a backfill's runs are in each state.
func printBackfillRuns(cmd *cobra.Command, be backend, id int64) error {
	out := cmd.OutOrStdout()
	fmt.Fprint(out, "runs:")
	for _, s := range []core.DagRunState{core.RunQueued, core.RunRunning, core.RunSuccess, core.RunFailed} {
		_, n, err := be.DagRunList(cmd.Context(), &store.DagRunListParams{BackfillID: id, States: []core.DagRunState{s}, Page: store.Page{Limit: 1}})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, " %s %d", s, n)
	}
	fmt.Fprintln(out)
	return nil
}
