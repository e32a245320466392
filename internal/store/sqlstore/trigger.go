package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// TaskInstanceDefer creates the trigger and defers the try on it, in one
// transaction; ErrConflict (nothing created) when the try is not in p.From.
func (s *Store) TaskInstanceDefer(ctx context.Context, p *store.TaskInstanceDeferParams) (int64, error) {
	if len(p.From) == 0 {
		return 0, fmt.Errorf("defer task instance %s: no allowed state given: %w", p.ID, core.ErrInvalid)
	}
	var id int64
	err := s.inTx(ctx, func(tx *Store) error {
		kwargs := p.Trigger.Kwargs
		if len(kwargs) == 0 {
			kwargs = []byte("{}")
		}
		if p.StreamID != "" {
			if err := tx.openProducerStream(ctx, p); err != nil {
				return err
			}
			if err := tx.tx.QueryRowContext(ctx, qTriggerInsertProducer, p.Trigger.Type, string(kwargs), micros(p.Now), p.StreamID).Scan(&id); err != nil {
				return tx.wrap(err, "create the %s trigger of stream %s", p.Trigger.Type, p.StreamID)
			}
		} else if err := tx.tx.QueryRowContext(ctx, qTriggerInsert, p.Trigger.Type, string(kwargs), micros(p.Now)).Scan(&id); err != nil {
			return tx.wrap(err, "create %s trigger", p.Trigger.Type)
		}
		b := builder{args: []any{p.ID, id, nullMicros(p.Timeout), p.NextMethod, nullJSON(p.NextKwargs), micros(p.Now)}}
		res, err := tx.tx.ExecContext(ctx, fmt.Sprintf(qTIDefer, list(&b, p.From)), b.args...)
		if err != nil {
			return tx.wrap(err, "defer task instance %s", p.ID)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("defer task instance %s: it is not %v: %w", p.ID, p.From, core.ErrConflict)
		}
		if p.StreamID != "" {
			// An earlier try's trigger stops producing: its triggerer's
			// hold fails, so only the new trigger appends.
			if _, err := tx.tx.ExecContext(ctx, qTriggerDeleteOtherProducers, p.StreamID, id); err != nil {
				return tx.wrap(err, "retire the earlier triggers of stream %s", p.StreamID)
			}
		}
		return nil
	})
	return id, err
}

// TaskInstanceResume moves deferred tries back to scheduled.
func (s *Store) TaskInstanceResume(ctx context.Context, p *store.TaskInstanceResumeParams) ([]string, error) {
	b := builder{args: []any{nullJSON(p.Event), p.Fail != "", core.NextMethodFail, failKwargs(p.Fail, p.SensorTimeout), micros(p.Now)}}
	from := core.TIDeferred
	if p.FromNone {
		if p.Fail == "" && p.Event == nil {
			return nil, fmt.Errorf("resume task instances: only a failure or an event moves tries that are not deferred: %w", core.ErrInvalid)
		}
		from = core.TINone
	}
	state := b.arg(string(from))
	var cond string
	switch {
	case p.TriggerID != 0 && len(p.IDs) == 0:
		cond = "trigger_id = " + b.arg(p.TriggerID)
	case p.TriggerID == 0 && len(p.IDs) > 0:
		cond = "id IN (" + list(&b, p.IDs) + ")"
	default:
		return nil, fmt.Errorf("resume task instances: give a trigger id or task instance ids: %w", core.ErrInvalid)
	}
	if p.Method != "" {
		cond += " AND next_method = " + b.arg(p.Method)
	}
	rows, err := s.writer().QueryContext(ctx, fmt.Sprintf(qTIResume, state, cond), b.args...)
	if err != nil {
		return nil, s.wrap(err, "resume deferred task instances")
	}
	ids, err := collect(rows, scanString)
	return ids, s.wrap(err, "resume deferred task instances")
}

// TaskInstanceDeferredTimedOut lists deferred tries past their timeout.
func (s *Store) TaskInstanceDeferredTimedOut(ctx context.Context, before time.Time, limit int) ([]core.TaskInstance, error) {
	return s.queryTIs(ctx, s.reader(), "list timed-out deferred task instances", qTIDeferredTimedOut, micros(before), limit)
}

// TriggerGet returns one trigger, or ErrNotFound.
func (s *Store) TriggerGet(ctx context.Context, id int64) (*core.Trigger, error) {
	t, err := scanTrigger(s.reader().QueryRowContext(ctx, qTriggerGet, id))
	if err != nil {
		return nil, s.wrap(err, "get trigger %d", id)
	}
	return t, nil
}

// TriggerList lists a page of triggers.
func (s *Store) TriggerList(ctx context.Context, p *store.TriggerListParams) ([]core.Trigger, error) {
	return listPage(ctx, s, "list triggers", qTriggerList, triggerFilter(p), &triggerOrder, p.Page, scanTrigger)
}

// TriggerCount counts the triggers TriggerList would list.
func (s *Store) TriggerCount(ctx context.Context, p *store.TriggerListParams) (int, error) {
	return s.count(ctx, "count triggers", qTriggerCount, triggerFilter(p))
}

func triggerFilter(p *store.TriggerListParams) *builder {
	b := &builder{}
	if p.TriggererID != "" {
		b.where("triggerer_id = ?", p.TriggererID)
	}
	return b
}

// TriggerClaim assigns unassigned triggers and those of dead triggerers.
func (s *Store) TriggerClaim(ctx context.Context, p *store.TriggerClaimParams) ([]core.Trigger, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	if p.TriggererID == "" {
		return nil, fmt.Errorf("claim triggers: empty triggerer id: %w", core.ErrInvalid)
	}
	what := "claim triggers for triggerer " + p.TriggererID
	args, ofRun := []any{p.TriggererID, micros(p.AliveSince), p.Limit}, qTriggerNotOfTests
	if p.DagRunID != 0 {
		args, ofRun = append(args, p.DagRunID, core.RunStreamPrefix(p.DagRunID)+"%"), qTriggerOfRun
	}
	rows, err := s.writer().QueryContext(ctx, fmt.Sprintf(qTriggerClaim, ofRun, s.d.ClaimLock), args...)
	if err != nil {
		return nil, s.wrap(err, "%s", what)
	}
	out, err := collect(rows, func(r *sql.Rows) (core.Trigger, error) {
		t, err := scanTrigger(r)
		if err != nil {
			return core.Trigger{}, err
		}
		return *t, nil
	})
	return out, s.wrap(err, "%s", what)
}

// TriggerHold locks trigger id while triggererID owns it.
func (s *Store) TriggerHold(ctx context.Context, id int64, triggererID string) error {
	res, err := s.writer().ExecContext(ctx, qTriggerHold, id, triggererID)
	if err != nil {
		return s.wrap(err, "hold trigger %d", id)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("trigger %d is no longer run by triggerer %s: %w", id, triggererID, core.ErrConflict)
	}
	return nil
}

// TriggerDeleteUnused deletes triggers no try waits on.
func (s *Store) TriggerDeleteUnused(ctx context.Context, ids ...int64) (int, error) {
	b := builder{}
	cond := ""
	if len(ids) > 0 {
		ph := make([]string, len(ids))
		for i, id := range ids {
			ph[i] = b.arg(id)
		}
		cond = "id IN (" + strings.Join(ph, ", ") + ") AND"
	}
	res, err := s.writer().ExecContext(ctx, fmt.Sprintf(qTriggerDeleteUnused, cond), b.args...)
	if err != nil {
		return 0, s.wrap(err, "delete unused triggers")
	}
	n, err := res.RowsAffected()
	return int(n), s.wrap(err, "delete unused triggers")
}

// TriggerRetireProducer deletes the stream trigger id when no try waits
// on it.
func (s *Store) TriggerRetireProducer(ctx context.Context, id int64) (bool, error) {
	res, err := s.writer().ExecContext(ctx, qTriggerRetireProducer, id)
	if err != nil {
		return false, s.wrap(err, "retire the producer trigger %d", id)
	}
	n, err := res.RowsAffected()
	return n > 0, s.wrap(err, "retire the producer trigger %d", id)
}

func scanTrigger(r scanner) (*core.Trigger, error) {
	var (
		t         core.Trigger
		kwargs    string
		at        int64
		triggerer sql.NullString
		stream    sql.NullString
	)
	if err := r.Scan(&t.ID, &t.Type, &kwargs, &at, &triggerer, &stream); err != nil {
		return nil, err
	}
	t.Kwargs, t.CreatedAt, t.TriggererID, t.StreamID = []byte(kwargs), fromMicros(at), triggerer.String, stream.String
	return &t, nil
}

// failKwargs is the next_kwargs of a try resumed into a failure.
func failKwargs(msg string, sensorTimeout bool) string {
	b, err := json.Marshal(core.DeferralFailure{Error: msg, SensorTimeout: sensorTimeout})
	if err != nil {
		return `{"error":"trigger failed"}`
	}
	return string(b)
}
