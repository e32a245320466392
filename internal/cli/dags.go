package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/schedule"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

func (a *app) dagsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dags", Short: "List, inspect, trigger, pause and test DAGs"}
	var asJSON bool
	var pf pageFlags
	var out output
	list := &cobra.Command{
		Use:   "list",
		Short: "List DAGs known to the database, by dag_id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			return a.withBackend(cmd, func(b backend) error {
				dags, total, err := b.DagList(cmd.Context(), &store.DagListParams{OnlyActive: true, Page: pg})
				dags, err = shownPage(cmd, &pf, dags, total, err)
				if err != nil {
					return err
				}
				rows := make([][]string, len(dags))
				for i, d := range dags {
					rows[i] = []string{d.DagID, strconv.FormatBool(d.IsPaused), orDash(d.Schedule), strings.Join(d.Tags, ","), d.FileLoc}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(dags), []string{"DAG_ID", "PAUSED", "SCHEDULE", "TAGS", "FILELOC"}, rows)
			})
		},
	}
	out.add(list)
	pf.add(list, "DAGs", 100)

	show := &cobra.Command{
		Use:   "show DAG_ID",
		Short: "Show a DAG's latest version: schedule and tasks with their upstreams",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				v, err := b.DagDefinition(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), v.Definition)
				}
				d := v.Definition
				out := cmd.OutOrStdout()
				sched := orDash(d.ScheduleSummary()) // as dags list shows it: an asset schedule too
				if tt := schedule.TimetableName(&d); tt != "" {
					sched += " (" + tt + ")"
				}
				fmt.Fprintf(out, "dag_id: %s (version %d)\nschedule: %s\nfile: %s\n", d.DagID, v.VersionNumber, sched, d.FileLoc)
				if d.Description != "" {
					fmt.Fprintf(out, "description: %s\n", d.Description)
				}
				fmt.Fprintln(out)
				header, rows := taskResponseRows(api.TaskResponses(&d))
				return table(out, header, rows)
			})
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the serialized DAG as JSON")

	var conf, runID, partition string
	trigger := &cobra.Command{
		Use:   "trigger DAG_ID",
		Short: "Create a manual run (the scheduler starts it; a paused DAG's run stays queued until it is unpaused)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := triggerParams(args[0], runID, conf)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("partition-key") {
				p.PartitionKey = &partition
			}
			return a.withBackend(cmd, func(b backend) error {
				run, err := b.DagRunTrigger(cmd.Context(), p)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "created run %s of %s (state %s)\n", run.RunID, run.DagID, run.State)
				warnPaused(cmd, b, run.DagID, "the run stays queued")
				return nil
			})
		},
	}
	trigger.Flags().StringVar(&conf, "conf", "", "run configuration, a JSON object (overrides params)")
	trigger.Flags().StringVar(&runID, "run-id", "", "run id (default manual__<logical date>)")
	trigger.Flags().StringVar(&partition, "partition-key", "", "the partition the run is for ({{ partition_key }}, $WEIR_PARTITION_KEY)")

	cmd.AddCommand(list, show, trigger, a.pauseCmd("pause", true), a.pauseCmd("unpause", false),
		a.importErrorsCmd(), a.dagWarningsCmd(), localOnly(a.dagsTestCmd()), a.dagsStateCmd(), a.dagsNextExecutionCmd(), a.dagsBackfillCmd(), a.dagsDeleteCmd())
	return cmd
}

// warnPaused tells, on stderr, that dagID is paused and so what waits (held
// says what, such as "the run stays queued") until it is unpaused, as
// Airflow 3 holds a paused DAG's runs. New DAGs start paused by default
// ([core] dags_are_paused_at_creation), so a newcomer's first trigger meets it.
func warnPaused(cmd *cobra.Command, b backend, dagID, held string) {
	if d, err := b.DagGet(cmd.Context(), dagID); err == nil && d.IsPaused {
		fmt.Fprintf(cmd.ErrOrStderr(), "dag %s is paused: %s until it is unpaused (weir dags unpause %s)\n", dagID, held, dagID)
	}
}

// triggerParams validates --conf before anything is written.
func triggerParams(dagID, runID, conf string) (runs.TriggerParams, error) {
	p := runs.TriggerParams{DagID: dagID, RunID: runID}
	if conf != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(conf), &obj); err != nil || obj == nil {
			return p, fmt.Errorf("--conf must be a JSON object, e.g. '{\"name\": \"x\"}': %q", conf)
		}
		p.Conf = json.RawMessage(conf)
	}
	return p, nil
}

func (a *app) pauseCmd(name string, paused bool) *cobra.Command {
	return &cobra.Command{
		Use:   name + " DAG_ID",
		Short: strings.ToUpper(name[:1]) + name[1:] + " a DAG (paused DAGs get no new runs and their runs do not advance)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				if err := b.DagSetPaused(cmd.Context(), args[0], paused); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "dag %s is %sd\n", args[0], name)
				return nil
			})
		},
	}
}

func (a *app) importErrorsCmd() *cobra.Command {
	var pf pageFlags
	var out output
	cmd := &cobra.Command{
		Use:   "list-import-errors",
		Short: "List DAG files that failed to load, with the reason",
		Long: "Lists the import errors the deployment's DAG processor recorded for its DAG folder. With --dags, " +
			"parses that folder now instead and lists its files that fail to load (nothing is recorded).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			list := func(b backend) ([]core.ImportError, int, error) {
				return b.ImportErrorList(cmd.Context(), &store.ImportErrorListParams{Page: pg})
			}
			if a.dags != "" {
				list = func(backend) ([]core.ImportError, int, error) { return a.folderImportErrors(cmd.Context(), pg) }
			}
			return a.withBackend(cmd, func(b backend) error {
				errs, total, err := list(b)
				errs, err = shownPage(cmd, &pf, errs, total, err)
				if err != nil {
					return err
				}
				if !out.isTable() {
					rows := make([][]string, len(errs))
					for i, e := range errs {
						rows[i] = []string{e.Filename, e.Message}
					}
					return out.print(cmd.OutOrStdout(), nonNilList(errs), nil, rows)
				}
				if len(errs) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no import errors")
				}
				for _, e := range errs {
					fmt.Fprintf(cmd.OutOrStdout(), "%s:\n  %s\n", e.Filename, strings.ReplaceAll(e.Message, "\n", "\n  "))
				}
				return nil
			})
		},
	}
	pf.add(cmd, "files", 50)
	out.add(cmd)
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// dagsStateCmd is `weir dags state DAG_ID RUN_ID|LOGICAL_DATE`, as
// `airflow dags state`: it prints the run's state.
func (a *app) dagsStateCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "state DAG_ID RUN_ID|LOGICAL_DATE",
		Short:   "Print the state of a DAG run, found by run id or logical date",
		Example: "  weir dags state etl manual__2026-01-02T00:00:00Z\n  weir dags state etl 2026-01-02",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				ctx := cmd.Context()
				run, err := b.DagRunGet(ctx, args[0], args[1])
				if errors.Is(err, core.ErrNotFound) {
					if at, perr := parseDateFlag("logical date", args[1]); perr == nil {
						var found []core.DagRun
						found, _, err = b.DagRunList(ctx, &store.DagRunListParams{DagID: args[0], LogicalDateGTE: at, LogicalDateLTE: at,
							Page: store.Page{Limit: 1}})
						if err == nil && len(found) == 1 {
							run = &found[0]
						} else if err == nil {
							err = fmt.Errorf("dag_id %q has no run with run id or logical date %q: %w", args[0], args[1], core.ErrNotFound)
						}
					} else {
						err = fmt.Errorf("dag_id %q has no run %q (give a run id, or a logical date such as 2026-01-02): %w", args[0], args[1], core.ErrNotFound)
					}
				}
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), run.State)
				return nil
			})
		},
	}
}

// dagsNextExecutionCmd is `weir dags next-execution DAG_ID`, as Airflow's:
// the logical dates of the next scheduled runs.
func (a *app) dagsNextExecutionCmd() *cobra.Command {
	var n int
	cmd := &cobra.Command{
		Use:   "next-execution DAG_ID",
		Short: "Print the logical dates of a DAG's next scheduled runs (none: no schedule, or past its end_date)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				next, err := b.DagNextRuns(cmd.Context(), args[0], n)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if next.IsPaused {
					fmt.Fprintf(cmd.ErrOrStderr(), "dag %s is paused: these runs start only once it is unpaused\n", next.DagID)
				}
				if len(next.NextRuns) == 0 {
					fmt.Fprintln(out, "None")
				}
				for _, r := range next.NextRuns {
					fmt.Fprintln(out, r.LogicalDate.UTC().Format(time.RFC3339))
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVarP(&n, "num-executions", "n", 1, "how many of the next runs to print")
	return cmd
}

// tasksListCmd is `weir tasks list DAG_ID`: the tasks of a DAG's latest
// version, in the DAG's order, as `airflow tasks list`.
func (a *app) tasksListCmd() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "list DAG_ID",
		Short: "List the tasks of a DAG (its latest version) with their operator and upstreams",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				tasks, err := b.DagTasks(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				header, rows := taskResponseRows(tasks)
				return out.print(cmd.OutOrStdout(), nonNilList(tasks), header, rows)
			})
		},
	}
	out.add(cmd)
	return cmd
}

// taskResponseRows is the table of `weir tasks list`: the tasks as the
// REST API describes them, defaults applied.
func taskResponseRows(tasks []api.TaskResponse) ([]string, [][]string) {
	rows := make([][]string, len(tasks))
	for i, t := range tasks {
		rows[i] = []string{t.TaskID, t.Operator, orDash(strings.Join(t.UpstreamTaskIDs, ",")), t.TriggerRule, strconv.Itoa(t.Retries)}
	}
	return []string{"TASK_ID", "OPERATOR", "UPSTREAM", "TRIGGER_RULE", "RETRIES"}, rows
}

// folderImportErrors parses --dags now (dagprocessor.Processor.ImportErrors)
// and returns pg's page of its files that fail to load, by file name, and
// how many there are.
func (a *app) folderImportErrors(ctx context.Context, pg store.Page) ([]core.ImportError, int, error) {
	var out []core.ImportError
	err := a.withStore(ctx, func(cfg *config.Config, st *sqlstore.Store) error {
		errs, err := newProcessor(cfg, st, a.opts, newLogger(a.opts.Stderr, cfg.Logging.Level)).ImportErrors(ctx)
		for _, f := range slices.Sorted(maps.Keys(errs)) {
			out = append(out, core.ImportError{Filename: f, Message: errs[f]})
		}
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	total := len(out)
	out = out[min(pg.Offset, total):]
	return out[:min(pg.Limit, len(out))], total, nil
}
