package command

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/trigger"
)

// The variables a watcher's process gets (docs/watchers.md#command).
const (
	// EnvCursor holds the committed cursor as JSON (null before the
	// first): the watched asset's, or, when the trigger watches several
	// assets, an object of asset name to cursor.
	EnvCursor = "WEIR_WATCHER_CURSOR"
	// EnvAssets holds the watched assets as a JSON list of {name, uri,
	// extra}.
	EnvAssets = "WEIR_WATCHED_ASSETS"
)

// watch runs the process as an asset watcher: each run gets the committed
// cursors and commits what it prints (relayWatch); when it exits, it runs
// again after poll_interval, or after a back-off when it failed.
func (c *commandTrigger) watch(ctx context.Context, rt *trigger.Runtime) error {
	return trigger.Watch(ctx, rt, trigger.WatchOptions{Interval: c.interval}, func(ctx context.Context, watched []trigger.Watched) (trigger.Batch, error) {
		env, err := watcherEnv(watched)
		if err != nil {
			return trigger.Batch{}, err
		}
		p, err := c.start(ctx, rt, env)
		if err != nil {
			return trigger.Batch{}, err
		}
		left, relayErr := c.relayWatch(ctx, rt, p.stdout)
		if relayErr != nil {
			p.stop() // its output can no longer be committed in order: run it again from the cursor
		}
		waitErr := p.wait()
		switch {
		case ctx.Err() != nil:
			return trigger.Batch{}, ctx.Err()
		case relayErr != nil:
			return trigger.Batch{}, relayErr
		case waitErr != nil:
			if len(left.Events) > 0 {
				rt.Logf("WARNING: %d events printed after the last cursor line were not recorded: the command failed", len(left.Events))
			}
			return trigger.Batch{}, fmt.Errorf("command %s: %w%s", c.argv[0], waitErr, p.stderr.tail())
		}
		return left, nil // events printed after the last cursor line, committed without a cursor
	})
}

// watcherEnv is the cursor and the assets as the process gets them.
func watcherEnv(watched []trigger.Watched) (map[string]string, error) {
	assets := make([]trigger.AssetInfo, 0, len(watched))
	cursors := make(map[string]json.RawMessage, len(watched))
	for _, w := range watched {
		assets = append(assets, w.Asset)
		cursors[w.Asset.Name] = orNull(w.Cursor)
	}
	var cursor any = cursors
	if len(watched) == 1 {
		cursor = orNull(watched[0].Cursor)
	}
	a, err := json.Marshal(assets)
	if err != nil {
		return nil, fmt.Errorf("encode the watched assets: %w", err)
	}
	cur, err := json.Marshal(cursor)
	if err != nil {
		return nil, fmt.Errorf("encode the watched cursors: %w", err)
	}
	return map[string]string{EnvAssets: string(a), EnvCursor: string(cur)}, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// line is one stdout line of a watcher's process, classified.
type line struct {
	event  *trigger.WatchEvent // an event line ({"event": ...}) or a bare value
	bare   bool                // a bare value: an event of every asset, committed at once
	cursor json.RawMessage     // a cursor line ({"cursor": ...})
	asset  string              // the asset an event or cursor line names ("" = every one)
}

// parseLine classifies a JSON line: an object whose keys are "event" and
// optionally "asset" and "partition_key" is an event line; one whose keys
// are "cursor" and optionally "asset" a cursor line; anything else a bare
// event. A malformed event or cursor line is an error saying why.
func parseLine(text string) (line, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &obj) != nil || (!onlyKeys(obj, "event", "asset", "partition_key") && !onlyKeys(obj, "cursor", "asset")) {
		return line{event: &trigger.WatchEvent{Payload: json.RawMessage(text)}, bare: true}, nil
	}
	var l line
	if raw, ok := obj["asset"]; ok {
		if json.Unmarshal(raw, &l.asset) != nil || l.asset == "" {
			return l, fmt.Errorf("\"asset\" must be a watched asset's name, got %s", raw)
		}
	}
	if c, ok := obj["cursor"]; ok {
		l.cursor = c
		return l, nil
	}
	l.event = &trigger.WatchEvent{Asset: l.asset, Payload: obj["event"]}
	if raw, ok := obj["partition_key"]; ok {
		if json.Unmarshal(raw, &l.event.PartitionKey) != nil {
			return l, fmt.Errorf("\"partition_key\" must be a string, got %s", raw)
		}
	}
	return l, nil
}

// onlyKeys reports whether obj holds first and no key but first and rest.
func onlyKeys(obj map[string]json.RawMessage, first string, rest ...string) bool {
	if _, ok := obj[first]; !ok {
		return false
	}
	for k := range obj {
		if k != first && !slices.Contains(rest, k) {
			return false
		}
	}
	return true
}

// relayWatch reads the process's JSON lines until end of file: event
// lines wait in a buffer that the next cursor line commits with its
// cursor, in one batch; a bare value is committed at once as an event of
// every watched asset. It returns the events still buffered at the end.
// A failed commit stops it (the process is then run again from the
// committed cursor); a line naming an asset that is not watched, or
// malformed, is logged and skipped.
func (c *commandTrigger) relayWatch(ctx context.Context, rt *trigger.Runtime, stdout io.Reader) (trigger.Batch, error) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	var buf trigger.Batch
	for {
		raw, tooLong, readErr := readLine(r)
		text := strings.TrimSpace(string(raw))
		switch {
		case tooLong:
			rt.Logf("WARNING: a stdout line longer than %d bytes was skipped", MaxLine)
		case text == "":
		case !json.Valid([]byte(text)):
			rt.Logf("WARNING: a stdout line is not JSON, so not an event: %s", clip(text))
		default:
			if err := c.take(ctx, rt, text, &buf); err != nil {
				return trigger.Batch{}, err
			}
		}
		if readErr != nil {
			return buf, nil // end of file, or the pipe closed
		}
	}
}

// take handles one JSON line: buffers an event, or commits.
func (c *commandTrigger) take(ctx context.Context, rt *trigger.Runtime, text string, buf *trigger.Batch) error {
	l, err := parseLine(text)
	if err == nil && l.asset != "" && !watching(rt, l.asset) {
		err = fmt.Errorf("asset %q is not watched by this trigger", l.asset)
	}
	if err != nil {
		rt.Logf("WARNING: a stdout line was skipped: %v: %s", err, clip(text))
		return nil
	}
	var b trigger.Batch
	switch {
	case l.bare:
		b.Events = []trigger.WatchEvent{*l.event}
	case l.event != nil:
		buf.Events = append(buf.Events, *l.event)
		return nil
	default:
		b.Events, *buf = buf.Events, trigger.Batch{}
		b.Cursors = map[string]json.RawMessage{}
		for _, w := range rt.Watcher.Watched() {
			if l.asset == "" || l.asset == w.Asset.Name {
				b.Cursors[w.Asset.Name] = l.cursor
			}
		}
	}
	start := time.Now()
	err = rt.Watcher.Commit(ctx, b)
	rt.Watcher.Polled(start, time.Since(start), err)
	if err != nil {
		return fmt.Errorf("commit %d events printed by command %s: %w", len(b.Events), c.argv[0], err)
	}
	return nil
}

// watching reports whether the trigger watches asset.
func watching(rt *trigger.Runtime, asset string) bool {
	for _, w := range rt.Watcher.Watched() {
		if w.Asset.Name == asset {
			return true
		}
	}
	return false
}
