package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/store/sqlstore"
)

func (a *app) dagsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dags", Short: "List, inspect, trigger, pause and test DAGs"}
	var asJSON bool
	var pf pageFlags
	list := &cobra.Command{
		Use:   "list",
		Short: "List DAGs known to the database, by dag_id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				dags, err := listPage(cmd, &pf, &store.DagListParams{OnlyActive: true, Page: pg}, st.DagList, st.DagCount)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), dags)
				}
				rows := make([][]string, len(dags))
				for i, d := range dags {
					rows[i] = []string{d.DagID, strconv.FormatBool(d.IsPaused), orDash(d.Schedule), strings.Join(d.Tags, ","), d.FileLoc}
				}
				return table(cmd.OutOrStdout(), []string{"DAG_ID", "PAUSED", "SCHEDULE", "TAGS", "FILELOC"}, rows)
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	pf.add(list, "DAGs", 100)

	show := &cobra.Command{
		Use:   "show DAG_ID",
		Short: "Show a DAG's latest version: schedule and tasks with their upstreams",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				v, err := st.DagVersionLatest(cmd.Context(), args[0])
				if err != nil {
					return fmt.Errorf("dag %q: %w", args[0], err)
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), v.Spec)
				}
				d := v.Spec
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "dag_id: %s (version %d)\nschedule: %s\nfile: %s\n", d.DagID, v.Version, orDash(d.Schedule), d.FileLoc)
				if d.Description != "" {
					fmt.Fprintf(out, "description: %s\n", d.Description)
				}
				rows := make([][]string, len(d.Tasks))
				for i, t := range d.Tasks {
					rows[i] = []string{t.TaskID, t.Operator, orDash(strings.Join(t.DependsOn, ",")), orDash(string(t.TriggerRule)), strconv.Itoa(t.Retries)}
				}
				fmt.Fprintln(out)
				return table(out, []string{"TASK_ID", "OPERATOR", "UPSTREAM", "TRIGGER_RULE", "RETRIES"}, rows)
			})
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the serialized DAG as JSON")

	var conf, runID, partition string
	trigger := &cobra.Command{
		Use:   "trigger DAG_ID",
		Short: "Create a manual run (the scheduler starts it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := triggerParams(args[0], runID, conf)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("partition-key") {
				p.PartitionKey = &partition
			}
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				run, err := svc.TriggerRun(cmd.Context(), a.cliActor(), p)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "created run %s of %s (state %s)\n", run.RunID, run.DagID, run.State)
				return nil
			})
		},
	}
	trigger.Flags().StringVar(&conf, "conf", "", "run configuration, a JSON object (overrides params)")
	trigger.Flags().StringVar(&runID, "run-id", "", "run id (default manual__<logical date>)")
	trigger.Flags().StringVar(&partition, "partition-key", "", "the partition the run is for ({{ .partition_key }}, $WEIR_PARTITION_KEY)")

	cmd.AddCommand(list, show, trigger, a.pauseCmd("pause", true), a.pauseCmd("unpause", false),
		a.importErrorsCmd(), a.dagWarningsCmd(), a.dagsTestCmd())
	return cmd
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
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				if _, err := svc.SetDagPaused(cmd.Context(), a.cliActor(), args[0], paused); err != nil {
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
	cmd := &cobra.Command{
		Use:   "list-import-errors",
		Short: "List DAG files that failed to load, with the reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(_ *config.Config, st *sqlstore.Store) error {
				errs, err := listPage(cmd, &pf, &store.ImportErrorListParams{Page: pg}, st.ImportErrorList, st.ImportErrorCount)
				if err != nil {
					return err
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
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
