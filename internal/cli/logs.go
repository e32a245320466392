package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/api"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/tasklog"
)

// taskLogsCmd prints a try's log through the command's transport: from
// where the api-servers keep logs ([logging] log_store: the log folder or
// the database) locally, from the REST API's log route remotely; with
// --follow it keeps printing while the task runs.
func (a *app) taskLogsCmd() *cobra.Command {
	var try, mapIndex int
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs DAG_ID RUN_ID TASK_ID",
		Short: "Print a task try's log (default: the current try); --follow tails it while the task runs",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			if try < 0 || mapIndex < core.NoMapIndex {
				return fmt.Errorf("--try must be 1 or more (0 = the current try) and --map-index -1 or more, got %d and %d", try, mapIndex)
			}
			return a.withBackend(cmd, func(b backend) error {
				k := core.TIKey{DagID: args[0], RunID: args[1], TaskID: args[2], MapIndex: mapIndex}
				key, ti, err := b.TaskLogKey(cmd.Context(), k, try)
				if err != nil {
					return err
				}
				var active func(context.Context) (bool, error)
				if follow && key.TryNumber == ti.TryNumber {
					active = func(ctx context.Context) (bool, error) {
						_, ti, err := b.TaskLogKey(ctx, k, key.TryNumber)
						return err == nil && tasklog.TryWriting(ti, key), err
					}
				}
				return tailLog(cmd, b, key, active)
			})
		},
	}
	cmd.Flags().IntVar(&try, "try", 0, "try number (default the current try)")
	cmd.Flags().IntVar(&mapIndex, "map-index", core.NoMapIndex, "map index of a mapped task")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing until the try finishes (waiting out a database or api-server restart of up to 5m)")
	return cmd
}

// followPoll is how often a followed log is read again when it has
// nothing new.
const followPoll = 500 * time.Millisecond

// logReader reads a log from an offset (backend.LogRead).
type logReader interface {
	LogRead(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error)
}

// followOutage is how long a followed log's source (the database, the
// api-servers) may stay unavailable before --follow gives up: workers ride
// out a restart, and so does a reader.
const followOutage = 5 * time.Minute

// tailLog copies key's log to stdout; with active set (--follow) it polls
// until active says the log's try or attempt no longer runs, and the log
// is drained. Following, it waits out an unavailable source
// (core.ErrUnavailable: a database or api-server restarting) for up to
// followOutage, saying so once on stderr.
func tailLog(cmd *cobra.Command, b logReader, key tasklog.Key, active func(context.Context) (bool, error)) error {
	ctx := cmd.Context()
	var offset int64
	var down time.Time // when the source became unavailable; zero while it answers
	wait := func(err error) error {
		if active == nil || !errors.Is(err, core.ErrUnavailable) {
			return err
		}
		if down.IsZero() {
			down = time.Now()
			fmt.Fprintf(cmd.ErrOrStderr(), "weir: the log's source is unavailable (%v); retrying for up to %s\n", err, followOutage)
		} else if time.Since(down) > followOutage {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followPoll):
			return nil
		}
	}
	for {
		data, next, err := b.LogRead(ctx, key, offset)
		if err != nil {
			if err := wait(err); err != nil {
				return err
			}
			continue
		}
		if len(data) > 0 {
			down = time.Time{} // the source answers again
			if _, err := cmd.OutOrStdout().Write(data); err != nil {
				return err
			}
			offset = next
			continue // drain before checking the state
		}
		if active == nil {
			return nil
		}
		running, err := active(ctx)
		if err != nil {
			if err := wait(err); err != nil {
				return err
			}
			continue
		}
		down = time.Time{} // the source answers again
		if !running {
			// One more read: the worker flushes before reporting the state.
			if data, _, rerr := b.LogRead(ctx, key, offset); rerr == nil {
				_, _ = cmd.OutOrStdout().Write(data)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
	}
}

// TaskLogKey implements backend.
func (b *localBackend) TaskLogKey(ctx context.Context, k core.TIKey, try int) (tasklog.Key, *core.TaskInstance, error) {
	return b.svc.TaskLogKey(ctx, k, try)
}

// CallbackLogKey implements backend: the callback is found by its id alone.
func (b *localBackend) CallbackLogKey(ctx context.Context, id int64, attempt int) (tasklog.Key, *core.Callback, error) {
	return b.svc.CallbackLogKey(ctx, service.AnyRun, service.AnyRun, id, attempt)
}

// LogRead implements backend, as the REST API's log routes read: a log not
// written yet reads empty.
func (b *localBackend) LogRead(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	logs, _, err := taskLogs(b.cfg, b.svc.Store())
	if err != nil {
		return nil, offset, err
	}
	data, next, err := logs.Read(ctx, key, offset)
	if tasklog.WroteNothing(err) {
		return nil, offset, nil
	}
	return data, next, err
}

// TaskLogKey implements backend: the task instance from the API, the try
// picked as the API's log route picks it.
func (b *restBackend) TaskLogKey(ctx context.Context, k core.TIKey, try int) (tasklog.Key, *core.TaskInstance, error) {
	var ti core.TaskInstance
	q := url.Values{"map_index": {strconv.Itoa(k.MapIndex)}}
	if err := b.c.Get(ctx, "/dags/"+seg(k.DagID)+"/dagRuns/"+seg(k.RunID)+"/taskInstances/"+seg(k.TaskID), q, &ti); err != nil {
		return tasklog.Key{}, nil, err
	}
	key, err := tasklog.TryKey(&ti, try)
	return key, &ti, err
}

// CallbackLogKey implements backend: the callback from the API, found by
// its id alone (under the "~" run), the attempt picked as its log route
// picks it. Not found (an api-server older than the route, or no such
// callback), the key names the id and the attempt asked for, the log
// route picking the attempt on each read (and saying what is not found),
// without the callback.
func (b *restBackend) CallbackLogKey(ctx context.Context, id int64, attempt int) (tasklog.Key, *core.Callback, error) {
	var cb core.Callback
	err := b.c.Get(ctx, "/dags/"+service.AnyRun+"/dagRuns/"+service.AnyRun+"/callbacks/"+strconv.FormatInt(id, 10), nil, &cb)
	if errors.Is(err, core.ErrNotFound) {
		return tasklog.Key{DagID: service.AnyRun, RunID: service.AnyRun, MapIndex: core.NoMapIndex, TryNumber: attempt, Callback: id}, nil, nil
	}
	if err != nil {
		return tasklog.Key{}, nil, err
	}
	key, err := tasklog.AttemptKey(&cb, attempt)
	return key, &cb, err
}

// LogRead implements backend with the log route of a try or of a callback.
func (b *restBackend) LogRead(ctx context.Context, key tasklog.Key, offset int64) ([]byte, int64, error) {
	q := url.Values{"token": {strconv.FormatInt(offset, 10)}}
	run := "/dags/" + seg(key.DagID) + "/dagRuns/" + seg(key.RunID)
	var path string
	if key.Callback > 0 {
		path = run + "/callbacks/" + strconv.FormatInt(key.Callback, 10) + "/logs"
		q.Set("attempt", strconv.Itoa(key.TryNumber))
	} else {
		path = run + "/taskInstances/" + seg(key.TaskID) + "/logs/" + strconv.Itoa(key.TryNumber)
		q.Set("map_index", strconv.Itoa(key.MapIndex))
	}
	// The raw text (the JSON answer's lines lose where the log's line
	// breaks were), the token in a header.
	data, hdr, err := b.c.GetText(ctx, path, q)
	if err != nil {
		return nil, offset, err
	}
	token := hdr.Get(api.LogTokenHeader)
	next, err := strconv.ParseInt(token, 10, 64)
	if err != nil {
		return nil, offset, fmt.Errorf("the answer of GET %s has %s %q, not an offset: is it a Weir api-server of the same version?",
			path, api.LogTokenHeader, token)
	}
	return data, next, nil
}
