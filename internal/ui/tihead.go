package ui

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/trigger"
)

// tiHead is the task-instance page's live part: its state, try, duration,
// the trigger a deferred try waits on, its stream, and its tries. The
// script refreshes it from LiveURL (tiFragment) while the page is open.
type tiHead struct {
	TI       core.TaskInstance
	Duration string
	Tries    []tiRow // every try, the first first
	Try      int     // the try whose log the page shows
	Trigger  *core.Trigger
	Stream   *streamPanel
	Rendered string // its rendered-templates page
	// LiveURL is where the script reads this part again; ETag is the
	// version the page shows.
	LiveURL, ETag string
}

// tiFragment answers the task-instance page's live updates as gridFragment
// does: the head's HTML with an ETag, or 304 while it is unchanged.
func (u *UI) tiFragment(w http.ResponseWriter, r *http.Request, req *request) {
	key, ti, err := u.loadTI(r)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	page := *r.URL
	page.Path = strings.TrimSuffix(page.Path, "/live")
	head, err := u.readHead(r, key, ti, &page)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	body, err := u.renderPart("ti", "tihead", req, head)
	if err != nil {
		u.failErr(w, r, req, err)
		return
	}
	writeFragment(w, r, body)
}

// readHead reads the live part of ti's page (page is its URL, whose ?try=
// says which try's log the page shows).
func (u *UI) readHead(r *http.Request, key core.TIKey, ti *core.TaskInstance, page *url.URL) (*tiHead, error) {
	ctx := r.Context()
	hist, err := u.st.TaskInstanceHistory(ctx, key.DagID, key.RunID, key.TaskID, key.MapIndex)
	if err != nil {
		return nil, err
	}
	now := u.clk.Now()
	h := &tiHead{TI: *ti, Try: ti.TryNumber, Duration: span(ti.StartDate, ti.EndDate, now),
		Rendered: tiPath(key) + "/rendered" + mapQuery(key)}
	if s := page.Query().Get("try"); s != "" {
		if h.Try, err = strconv.Atoi(s); err != nil || h.Try < 1 || h.Try > ti.TryNumber {
			return nil, badTry(ti.TryNumber, s)
		}
	}
	for _, t := range append(hist, *ti) {
		q := url.Values{"try": {strconv.Itoa(t.TryNumber)}}
		if key.MapIndex >= 0 {
			q.Set("map_index", strconv.Itoa(key.MapIndex))
		}
		h.Tries = append(h.Tries, tiRow{TaskInstance: t, Duration: span(t.StartDate, t.EndDate, now),
			Link: tiPath(key) + "?" + q.Encode() + "#log"})
	}
	if ti.TriggerID != nil && ti.State == core.TIDeferred {
		if h.Trigger, err = u.st.TriggerGet(ctx, *ti.TriggerID); err != nil && !errors.Is(err, core.ErrNotFound) {
			return nil, err
		}
		if h.Trigger != nil {
			h.Trigger.Kwargs = trigger.MaskKwargs(h.Trigger.Kwargs) // as the REST API shows it: secrets masked
		}
	}
	if h.Stream, err = u.readStreamPanel(ctx, ti, h.Trigger); err != nil {
		return nil, err
	}
	live := *page
	live.Path += "/live"
	h.LiveURL = live.RequestURI()
	return h, nil
}

// badTry is the error of a ?try= that is not one of the instance's tries.
func badTry(tries int, s string) error {
	return fmt.Errorf("%w: %w", &badParam{name: "try", value: s, want: "a try of this instance, 1 to " + strconv.Itoa(tries)}, core.ErrInvalid)
}

// readStreamPanel reads the stream side of a task instance, if it has one
// (streampanel.go): the stream its deferred try's trigger produces, or, for
// a task that iterates over a producer's stream, its expansion so far.
func (u *UI) readStreamPanel(ctx context.Context, ti *core.TaskInstance, trig *core.Trigger) (*streamPanel, error) {
	v, err := u.st.DagVersionGet(ctx, ti.DagVersionID)
	if err != nil && !errors.Is(err, core.ErrNotFound) {
		return nil, err
	}
	var task *core.Task
	if v != nil {
		task = v.Spec.Task(ti.TaskID)
	}
	in := streamInputs{TI: ti}
	if trig != nil && trig.StreamID != "" {
		if in.Own, err = u.streamGet(ctx, trig.StreamID); err != nil {
			return nil, err
		}
	}
	if task != nil && task.Iterates() {
		in.Producer = task.Iterate
		if in.Placeholder, err = u.st.TaskInstanceGetByKey(ctx, ti.DagID, ti.RunID, ti.TaskID, core.NoMapIndex); err != nil && !errors.Is(err, core.ErrNotFound) {
			return nil, err
		}
		n, err := u.st.TaskInstanceCount(ctx, &store.TaskInstanceListParams{DagRunID: ti.DagRunID, TaskID: ti.TaskID})
		if err != nil {
			return nil, err
		}
		if in.Instances = n; in.Placeholder != nil {
			in.Instances--
		}
		if in.Source, err = u.producerStream(ctx, ti, task.Iterate); err != nil {
			return nil, err
		}
	}
	return buildStreamPanel(in), nil
}

// producerStream is the stream the producer task's try in ti's run is
// deferred on producing, nil when it is not (yet, or any more).
func (u *UI) producerStream(ctx context.Context, ti *core.TaskInstance, producer string) (*core.Stream, error) {
	p, err := u.st.TaskInstanceGetByKey(ctx, ti.DagID, ti.RunID, producer, core.NoMapIndex)
	if errors.Is(err, core.ErrNotFound) || (err == nil && p.TriggerID == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := u.st.TriggerGet(ctx, *p.TriggerID)
	if errors.Is(err, core.ErrNotFound) || (err == nil && t.StreamID == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return u.streamGet(ctx, t.StreamID)
}

// streamGet reads a stream's head; nil when it is gone (cleaned up).
func (u *UI) streamGet(ctx context.Context, id string) (*core.Stream, error) {
	s, err := u.st.StreamGet(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	return s, err
}

// headHTML renders the head for the page and records its version.
func (u *UI) headHTML(req *request, h *tiHead) (template.HTML, error) {
	body, err := u.renderPart("ti", "tihead", req, h)
	if err != nil {
		return "", err
	}
	h.ETag = etagOf(body)
	return template.HTML(body), nil //nolint:gosec // rendered by html/template
}
