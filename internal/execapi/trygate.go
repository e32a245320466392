package execapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/execclient"
	"github.com/weirflow/weir/internal/store"
)

// tryNeed is what a route needs of the try its execution token names. Every
// execution route goes through tryGate, the one place that checks it: a
// token whose try is over (finished, retried, cleared) grants nothing and
// is never refreshed.
type tryNeed int

const (
	// needRunning is a data route (logs, XCom, connections, state, assets):
	// the try must be running; otherwise 403 not_running (or invalid_state
	// when the try is no longer current).
	needRunning tryNeed = iota
	// needLifecycle is heartbeat: the try must be running, or failed over
	// for missed heartbeats with its retry not begun (up_for_retry: its
	// worker's late heartbeat takes it back, its late report ends it);
	// otherwise 409 not_running, the worker's signal to stop.
	needLifecycle
	// needEnd is the state report: as needLifecycle, but a try this server
	// handed out with the report's token is not read (handedOut).
	needEnd
	// needLog is a log chunk: the try must be running or failed over, as
	// for needLifecycle (the worker ships its log's tail before its late
	// report), or ended by someone else than its worker less than
	// store.LateLogGrace ago (a mark, or a clear that archived it: the
	// worker ships the lines it wrote until it stopped the task; ADR 0049);
	// otherwise 403 not_running.
	needLog
	// needStart is the run route: the try may be queued (claimed) or
	// running (the store then refuses a second start with 409).
	needStart
)

// allows reports whether a try in state st may use a route of need.
func (need tryNeed) allows(st core.TIState) bool {
	switch st {
	case core.TIRunning:
		return true
	case core.TIQueued:
		return need == needStart
	case core.TIUpForRetry:
		return need == needLifecycle || need == needEnd || need == needLog
	default:
		return false
	}
}

// tiKey is the request-context key of the try tryGate loaded.
type tiKey struct{}

// lifecycle wraps heartbeat: an execution token whose try runs.
func (s *server) lifecycle(h authedHandler) http.HandlerFunc {
	return s.tryGate(needLifecycle, h)
}

// ending wraps the state report: an execution token whose try runs.
func (s *server) ending(h authedHandler) http.HandlerFunc {
	return s.tryGate(needEnd, h)
}

// logging wraps the log route: an execution token whose try runs or was
// failed over.
func (s *server) logging(h authedHandler) http.HandlerFunc {
	return s.tryGate(needLog, h)
}

// starting wraps the run route: an execution token whose try is queued.
func (s *server) starting(h authedHandler) http.HandlerFunc {
	return s.tryGate(needStart, h)
}

// tryGate authenticates an execution token, checks that a path's {id} is
// the token's subject (403), loads the token's try and refuses it unless
// it is in a state need allows; only then does it reissue a token near
// expiry and call h, which finds the try with tokenTI. A state report's
// try this server handed out with its token is taken from handedOut
// instead of loaded (the report's end then checks it: gateAgain).
func (s *server) tryGate(need tryNeed, h authedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := s.authenticate(r, auth.ScopeExecution)
		if err == nil {
			if id := r.PathValue("id"); id != "" {
				err = ownTI(r, c)
			}
		}
		var ti *core.TaskInstance
		ctx := r.Context()
		if err == nil && need == needEnd {
			if tok, _ := bearer(r, "Authorization"); tok != "" {
				if ti = s.handed.take(tok); ti != nil && ti.ID == c.Subject {
					ctx = context.WithValue(ctx, handedKey{}, true)
				} else {
					ti = nil
				}
			}
		}
		if err == nil && ti == nil {
			ti, err = s.liveTry(ctx, c.Subject, need)
		}
		// A try taken from handedOut is not known to run yet: its token is
		// not refreshed (a final report needs none; a client whose token
		// expired renews it with its worker's credential), nor is a stopped
		// try's, whose last lines come within the grace.
		if err == nil && ctx.Value(handedKey{}) == nil && need.allows(ti.State) && s.tokens.NeedsRefresh(c) {
			var fresh string
			if fresh, err = s.tokens.Refresh(c); err == nil {
				w.Header().Set(execclient.RefreshedTokenHeader, fresh)
			}
		}
		if err == nil {
			err = h(w, r.WithContext(context.WithValue(ctx, tiKey{}, ti)), c)
		}
		if err != nil {
			writeError(w, r, s.log, err)
		}
	}
}

// liveTry loads the try id (a token's subject) and checks it against need.
func (s *server) liveTry(ctx context.Context, id string, need tryNeed) (*core.TaskInstance, error) {
	status, refusal := http.StatusForbidden, core.ErrForbidden
	if need == needLifecycle || need == needEnd || need == needStart {
		status, refusal = http.StatusConflict, core.ErrConflict
	}
	ti, err := s.st.TaskInstanceGet(ctx, id)
	if errors.Is(err, core.ErrNotFound) && need == needLog {
		if ar, aerr := s.st.TaskInstanceArchived(ctx, id); aerr == nil && s.stoppedLately(ar) {
			return ar, nil // a clear archived it running: as a mark's, below
		}
	}
	switch {
	case errors.Is(err, core.ErrNotFound):
		return nil, withStatus(status, execclient.ReasonInvalidState,
			fmt.Errorf("task instance try %s is no longer current (a retry or clear replaced it); its token grants nothing: %w",
				id, refusal))
	case err != nil:
		return nil, fmt.Errorf("load task instance %s: %w", id, err)
	case need.allows(ti.State):
		return ti, nil
	case need == needLog && s.stoppedLately(ti):
		return ti, nil // its worker ships the lines it wrote until it stopped the task
	}
	return nil, withStatus(status, execclient.ReasonNotRunning, notRunningErr(ti, refusal))
}

// stoppedLately says whether someone other than its worker ended the
// running try ti less than store.LateLogGrace ago.
func (s *server) stoppedLately(ti *core.TaskInstance) bool {
	return ti.StoppedAt != nil && s.clock.Now().Sub(*ti.StoppedAt) < store.LateLogGrace
}

// notRunningErr says that a try's token is refused because of its state,
// wrapping refusal (core.ErrConflict or core.ErrForbidden: what the
// answer's status says).
func notRunningErr(ti *core.TaskInstance, refusal error) error {
	return fmt.Errorf("task instance %s is not running (it is %s); the token of a try that is not running grants nothing: %w",
		ti.ID, stateName(ti.State), refusal)
}

// stateName names a state for a message ("none" for the empty state).
func stateName(st core.TIState) string {
	if st == core.TINone {
		return "none"
	}
	return string(st)
}

// tokenTI returns the try tryGate loaded for the request's token.
func (s *server) tokenTI(r *http.Request, c *auth.Claims) (*core.TaskInstance, error) {
	if ti, ok := r.Context().Value(tiKey{}).(*core.TaskInstance); ok && ti != nil && ti.ID == c.Subject {
		return ti, nil
	}
	return nil, fmt.Errorf("task instance %s: the route did not pass the try gate: %w", c.Subject, core.ErrForbidden)
}
