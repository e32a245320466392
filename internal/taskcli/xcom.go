package taskcli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// XComCmd is the in-task XCom CLI: it runs inside a task (any language) and
// reaches the Execution API with the try's token from the environment.
func XComCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "xcom",
		Short: "Push and pull XCom values from inside a running task",
		Long:  "Reads WEIR_API_URL, WEIR_TASK_TOKEN and the task identity that the worker sets for every task.",
	}
	push := &cobra.Command{
		Use:     "push KEY JSON",
		Short:   "Store a JSON value under KEY for this task instance",
		Example: "  weir xcom push return_value '[1, 2, 3]'\n  weir xcom push greeting '\"hello\"'",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v any
			if err := json.Unmarshal([]byte(args[1]), &v); err != nil {
				return fmt.Errorf("value for %q is not JSON (quote strings: '\"text\"'): %w", args[0], err)
			}
			c, err := execclient.ClientFromEnv()
			if err != nil {
				return err
			}
			return c.XComPush(cmd.Context(), args[0], json.RawMessage(args[1]))
		},
	}
	var taskID, key string
	var mapIndex int
	pull := &cobra.Command{
		Use:   "pull",
		Short: "Print a JSON value pushed by a task of this run (exit 1 when absent)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := execclient.ClientFromEnv()
			if err != nil {
				return err
			}
			if taskID == "" {
				taskID = c.Identity.TaskID
			}
			index := execclient.AnyMapIndex
			if cmd.Flags().Changed("map-index") {
				index = mapIndex
			}
			v, err := c.XComPull(cmd.Context(), taskID, key, index)
			if errors.Is(err, core.ErrNotFound) {
				if index == execclient.AnyMapIndex {
					return &ExitError{Code: 1, Err: fmt.Errorf("no XCom %q for task %q in this run", key, taskID)}
				}
				return &ExitError{Code: 1, Err: fmt.Errorf("no XCom %q for task %q (map index %d) in this run", key, taskID, mapIndex)}
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(v))
			return nil
		},
	}
	pull.Flags().StringVar(&taskID, "task", "", "task id (default this task)")
	pull.Flags().StringVar(&key, "key", core.DefaultXComKey, "XCom key")
	pull.Flags().IntVar(&mapIndex, "map-index", core.NoMapIndex, "map index of one instance (-1 = unmapped; not given: an unmapped task's value, or a mapped task's values as one JSON list)")
	cmd.AddCommand(push, pull)
	return cmd
}
