package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/secrets"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/trigger"
)

// triggersCmd lists triggers and trigger types.
func (a *app) triggersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "triggers", Short: "List the triggers deferred tasks wait on, and the trigger types"}
	var pf pageFlags
	var triggerer string
	var out output
	list := &cobra.Command{
		Use:   "list",
		Short: "List triggers with their triggerer (kwargs with secrets masked)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pg, err := pf.page()
			if err != nil {
				return err
			}
			return a.withService(cmd.Context(), func(_ *config.Config, svc *service.Service) error {
				st := svc.Store()
				trs, err := listPage(cmd, &pf, &store.TriggerListParams{TriggererID: triggerer, Page: pg}, st.TriggerList, st.TriggerCount)
				if err != nil {
					return err
				}
				rows := make([][]string, len(trs))
				for i, t := range trs {
					rows[i] = []string{strconv.FormatInt(t.ID, 10), t.Type, fmtTime(&t.CreatedAt),
						orDash(t.TriggererID), string(secrets.MaskJSON(t.Kwargs))}
				}
				for i := range trs {
					trs[i].Kwargs = secrets.MaskJSON(trs[i].Kwargs)
				}
				return out.print(cmd.OutOrStdout(), nonNilList(trs), []string{"ID", "TYPE", "CREATED", "TRIGGERER", "KWARGS"}, rows)
			})
		},
	}
	list.Flags().StringVar(&triggerer, "triggerer", "", "only the triggers this triggerer (job id) runs")
	pf.add(list, "triggers", 100)
	out.add(list)
	types := &cobra.Command{
		Use:   "types",
		Short: "List the trigger types this program knows (built-in and its own)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rows [][]string
			for _, t := range a.opts.triggerTypes.Types() {
				var uses []string
				if t.Can(trigger.UseDeferral) {
					uses = append(uses, "deferral")
				}
				if t.Can(trigger.UseWatcher) {
					uses = append(uses, "watcher")
				}
				rows = append(rows, []string{t.Name, strings.Join(uses, ","), orDash(t.Summary)})
			}
			return table(cmd.OutOrStdout(), []string{"TYPE", "USES", "FIRES"}, rows)
		},
	}
	cmd.AddCommand(list, types)
	return cmd
}

// statesForRunCmd lists a run's task instances, with the trigger of each
// deferred one (as `airflow tasks states-for-dag-run`).
func (a *app) statesForRunCmd() *cobra.Command {
	var out output
	cmd := &cobra.Command{
		Use:   "states-for-dag-run DAG_ID RUN_ID",
		Short: "List a run's task instances with their state, try and, for a deferred one, its trigger",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withBackend(cmd, func(b backend) error {
				tis, err := b.TaskInstancesOfRun(cmd.Context(), args[0], args[1])
				if err != nil {
					return err
				}
				rows := make([][]string, len(tis))
				for i := range tis {
					ti := &tis[i]
					rows[i] = []string{ti.TaskID, strconv.Itoa(ti.MapIndex), ti.State.String(), strconv.Itoa(ti.TryNumber),
						fmtTime(ti.StartDate), fmtTime(ti.EndDate), waitingOn(ti)}
				}
				return out.print(cmd.OutOrStdout(), nonNilList(tis), []string{"TASK", "MAP_INDEX", "STATE", "TRY", "START", "END", "WAITING ON"}, rows)
			})
		},
	}
	out.add(cmd)
	return cmd
}

// waitingOn describes a deferred try's trigger (filled by the backend, its
// kwargs masked): type, id, triggerer and timeout; "-" for any other try.
func waitingOn(ti *core.TaskInstance) string {
	if ti.TriggerID == nil {
		return "-"
	}
	s := fmt.Sprintf("trigger %d", *ti.TriggerID)
	if tr := ti.Trigger; tr != nil {
		s = fmt.Sprintf("%s trigger %d %s on %s", tr.Type, tr.ID, tr.Kwargs, orDash(tr.TriggererID))
	}
	if ti.TriggerTimeout != nil {
		s += ", timeout " + fmtTime(ti.TriggerTimeout)
	}
	return s
}
