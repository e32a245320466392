package taskcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
)

// streamLong is `weir stream --help`.
const streamLong = `A task declared with stream: true pushes items while it runs; each becomes one mapped instance
of the tasks that iterate over it (map_index = the item's sequence index), created and run at once.
Reads WEIR_API_URL, WEIR_TASK_TOKEN (or WEIR_TASK_TOKEN_FILE) and WEIR_TI_ID, which the worker sets
for every task.

Exit codes: 0 done; 2 bad input (not JSON, an item over 1 MiB, a task without stream: true); 3 the
API refused the request (the stream is closed, the try is not running) or could not be reached.`

// StreamCmd is the in-task `weir stream`: a running producer task (one
// with stream: true) pushes items to its run's stream, over which tasks
// with iterate are lazily mapped, and closes it
// (docs/streaming.md#pushes-from-a-running-task).
func StreamCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "stream", Long: streamLong,
		Short: "Push items to the running task's stream, which tasks with iterate expand over (stream: true tasks)"}
	var index int64
	push := &cobra.Command{
		Use:   "push JSON|-",
		Short: "Append one item (a JSON value of at most 1 MiB; - reads it from stdin) to the task's stream; waits while the stream is full",
		Long: `Appends the item and returns once it is persisted. While the stream holds max_pending items not yet
expanded, the command waits for room (backpressure). --index gives the item's sequence index
(0, 1, 2, ... in push order): an item the stream holds already is not appended again, so a retry of
the task that pushes the same items again adds nothing. Without it the item goes at the end; the
command's own retries after a lost answer are safe either way. An item given as - is read from
stdin: a command line holds at most about 128 KiB, an item up to 1 MiB.`,
		Example: `  for i in $(seq 0 99); do weir stream push --index $i "{\"page\": $i}"; done
  jq -c '{rows: .}' big.json | weir stream push -
  weir stream close`,
		Args: args(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			item := []byte(a[0])
			if a[0] == "-" {
				var err error
				if item, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), core.MaxStreamPayloadBytes+2)); err != nil {
					return &ExitError{Code: exitInvalid, Err: fmt.Errorf("read the item from stdin: %w", err)}
				}
				item = bytes.TrimSpace(item)
			}
			if len(item) > core.MaxStreamPayloadBytes {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("the item is more than the limit of %d bytes per item (store large data elsewhere and push its location)",
					core.MaxStreamPayloadBytes)}
			}
			if !json.Valid(item) {
				return &ExitError{Code: exitInvalid, Err: fmt.Errorf("the item is not a JSON value (quote strings: '\"text\"'): %s", clipItem(string(item)))}
			}
			return pushStream(cmd.Context(), cmd, index, []json.RawMessage{item}, false)
		},
	}
	push.Flags().Int64Var(&index, "index", -1, "the item's sequence index (-1: after the last item)")
	closeCmd := &cobra.Command{
		Use:   "close",
		Short: "Close the task's stream: no more items; the expansion over it is complete once each has its instance",
		Long: `Closes the stream (its last item is marked is_last). Tasks downstream of the iterating tasks run once
every item's instance is done. A producer that succeeds without closing has its stream closed for
it; closing twice changes nothing.`,
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pushStream(cmd.Context(), cmd, -1, nil, true)
		},
	}
	cmd.AddCommand(push, closeCmd)
	return cmd
}

// pushStream pushes items from sequence index from (-1: the stream's
// end, read first so that retries stay idempotent), closing after them
// with closing, and prints the stream's head as JSON.
func pushStream(ctx context.Context, cmd *cobra.Command, from int64, items []json.RawMessage, closing bool) error {
	c, err := execclient.ClientFromEnv()
	if err != nil {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("push to the task's stream: %w", err)}
	}
	if from < 0 {
		h, err := c.StreamHead(ctx)
		if err != nil {
			return taskStateError("push to the task's stream", err)
		}
		from = h.NextIndex
	}
	h, err := c.PushStream(ctx, from, items, closing)
	if err != nil {
		return taskStateError("push to the task's stream", err)
	}
	return json.NewEncoder(cmd.OutOrStdout()).Encode(h)
}

func clipItem(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
