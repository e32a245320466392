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
	"github.com/weirflow/weir/internal/secrets"
)

// tiHead is the task-instance page's live part: its state, try, duration,
// the trigger a deferred try waits on, its stream, and its tries. The
// script refreshes it from LiveURL (tiFragment) while the page is open.
type tiHead struct {
	TI       core.TaskInstance
	Duration string
	Tries    []tiRow // every try that started, the first first
	Try      int     // the try whose log the page shows
	// NotRun is set while the current try has not started (Airflow shows
	// such an instance at try 0): it is no try of the list, and has no log.
	NotRun bool
	// TryOver is set once the current try has ended (its log is whole):
	// the page's log tail stops.
	TryOver  bool
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
	h.TryOver = ti.State.Terminal() || ti.State == core.TIUpForRetry
	tries := hist
	if h.NotRun = ti.StartDate == nil; !h.NotRun {
		tries = append(tries, *ti)
	}
	for _, t := range tries {
		h.Tries = append(h.Tries, tiRow{TaskInstance: t, Duration: span(t.StartDate, t.EndDate, now),
			Link: tiPath(key) + "?" + tryQuery(key, t.TryNumber) + "#log"})
	}
	if ti.TriggerID != nil && ti.State == core.TIDeferred {
		if h.Trigger, err = u.st.TriggerGet(ctx, *ti.TriggerID); err != nil && !errors.Is(err, core.ErrNotFound) {
			return nil, err
		}
		if h.Trigger != nil {
			h.Trigger.Kwargs = secrets.MaskJSON(h.Trigger.Kwargs) // as the REST API shows it: secrets masked
		}
	}
	if h.Stream, err = u.readStreamPanel(ctx, ti); err != nil {
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
// (streampanel.go): the stream the task fills in its run as a producer
// (core.TaskStreamID), and, for a task that iterates over a producer's
// stream, its expansion as service.Expansion reports it.
func (u *UI) readStreamPanel(ctx context.Context, ti *core.TaskInstance) (*streamPanel, error) {
	in := streamInputs{TI: ti}
	var err error
	if in.Own, err = u.streamGet(ctx, core.TaskStreamID(ti.DagRunID, ti.TaskID)); err != nil {
		return nil, err
	}
	switch in.Expansion, err = u.svc.Expansion(ctx, ti.DagID, ti.RunID, ti.TaskID); {
	case errors.Is(err, core.ErrInvalid), errors.Is(err, core.ErrNotFound): // no iterate (or a task of another version)
		in.Expansion = nil
	case err != nil:
		return nil, err
	default:
		if in.Source, err = u.streamGet(ctx, in.Expansion.StreamID); err != nil {
			return nil, err
		}
	}
	return buildStreamPanel(in), nil
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
