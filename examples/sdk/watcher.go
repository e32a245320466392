package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/weirflow/weir"
)

// jsonlKwargs are the kwargs of the jsonl_tail watcher: the file to follow.
type jsonlKwargs struct {
	Path string `json:"path"`
}

// jsonlCursor is how far the watcher has read: the byte offset after the
// last complete line (a file shorter than that was replaced: start over).
type jsonlCursor struct {
	Offset int64 `json:"offset"`
}

// jsonlTailType is a watcher written as one poll function: every complete
// new line of a JSON-lines file is an event whose extra is the line's
// object; the cursor is the byte offset after the last line read. The
// framework polls (poll_interval, default 5s), backs off on errors and
// commits the events with the cursor, so a crash never skips a line.
var jsonlTailType = weir.PollWatcher("jsonl_tail", "each new line of a JSON-lines file",
	func(_ context.Context, k jsonlKwargs, _ weir.WatchedAsset, raw json.RawMessage) ([]weir.WatchEvent, json.RawMessage, error) {
		if !filepath.IsAbs(k.Path) {
			return nil, nil, fmt.Errorf("path %q must be absolute", k.Path)
		}
		var cur jsonlCursor
		if raw != nil {
			if err := json.Unmarshal(raw, &cur); err != nil {
				return nil, nil, fmt.Errorf("cursor %s: %w", raw, err)
			}
		}
		f, err := os.Open(k.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil // nothing yet
		}
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Size() < cur.Offset {
			cur.Offset = 0 // truncated or replaced
		}
		if _, err := f.Seek(cur.Offset, io.SeekStart); err != nil {
			return nil, nil, err
		}
		var events []weir.WatchEvent
		r := bufio.NewReader(f)
		for len(events) < 1000 { // a backlog drains over several polls
			line, err := r.ReadBytes('\n')
			if err != nil {
				break // EOF, or a line still being written: read it next time
			}
			cur.Offset += int64(len(line))
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			var payload map[string]any
			if err := json.Unmarshal(line, &payload); err != nil {
				payload = map[string]any{"line": string(line)}
			}
			events = append(events, weir.WatchEvent{Payload: payload})
		}
		next, err := json.Marshal(cur)
		return events, next, err
	})

// watcherDAG runs once per batch of new lines of /tmp/weir-example/orders.jsonl
// (append a line: echo '{"order": 7}' >> /tmp/weir-example/orders.jsonl;
// $WEIR_EXAMPLE_ORDERS names another file, $WEIR_EXAMPLE_POLL another poll
// interval) and logs each line it was started for.
func watcherDAG() *weir.DAG {
	path := cmp.Or(os.Getenv("WEIR_EXAMPLE_ORDERS"), "/tmp/weir-example/orders.jsonl")
	spec, err := weir.NewTrigger("jsonl_tail", map[string]string{"path": path,
		"poll_interval": cmp.Or(os.Getenv("WEIR_EXAMPLE_POLL"), "2s")})
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	orders := weir.Asset("jsonl_orders", weir.AssetURI("file://"+path), weir.AssetWatcher("tail", spec))
	dag := weir.NewDAG("go_watcher",
		weir.Description("Runs for each batch of new lines of a JSON-lines file, found by a custom poll-function watcher."),
		weir.Tags("example", "go", "watcher"), weir.ScheduleOnAssets(orders))
	dag.Go("process", func(_ context.Context, tc *weir.TaskContext) (any, error) {
		events := tc.TriggeringAssetEvents()
		for _, e := range events {
			tc.Logger.Info("new line", "event", e.ID, "extra", string(e.Extra))
		}
		return len(events), nil
	}, weir.Inlets(orders), weir.Retries(3), weir.RetryDelay(time.Second))
	return dag
}
