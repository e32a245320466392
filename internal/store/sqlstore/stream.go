package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// streamInsertRows is how many envelopes one INSERT carries (3 bind
// values each, far under both engines' limits).
const streamInsertRows = 500

// StreamCreate creates a stream and, optionally, its trigger.
func (s *Store) StreamCreate(ctx context.Context, p *store.StreamCreateParams) (*core.Stream, error) {
	if p.ID == "" || p.MaxPending < 1 {
		return nil, fmt.Errorf("create stream %q: an id and a max_pending of at least 1 are required: %w", p.ID, core.ErrInvalid)
	}
	var out *core.Stream
	err := s.inTx(ctx, func(tx *Store) error {
		if _, err := tx.tx.ExecContext(ctx, qStreamInsert, p.ID, p.MaxPending, micros(p.Now)); err != nil {
			return tx.wrap(err, "create stream %s", p.ID)
		}
		if p.Trigger.Type != "" {
			kwargs := p.Trigger.Kwargs
			if len(kwargs) == 0 {
				kwargs = []byte("{}")
			}
			if _, err := tx.tx.ExecContext(ctx, qTriggerInsertStream, p.Trigger.Type, string(kwargs), micros(p.Now), p.ID); err != nil {
				return tx.wrap(err, "create the %s trigger of stream %s", p.Trigger.Type, p.ID)
			}
		}
		var err error
		out, err = tx.StreamGet(ctx, p.ID)
		return err
	})
	return out, err
}

// StreamGet returns one stream.
func (s *Store) StreamGet(ctx context.Context, id string) (*core.Stream, error) {
	st, err := scanStream(s.reader().QueryRowContext(ctx, qStreamGet, id))
	if err != nil {
		return nil, s.wrap(err, "get stream %s", id)
	}
	return st, nil
}

// StreamAppend appends what max_pending leaves room for.
func (s *Store) StreamAppend(ctx context.Context, p *store.StreamAppendParams) (*store.StreamAppendResult, error) {
	if len(p.Payloads) == 0 {
		return nil, fmt.Errorf("append to stream %s: no events given (StreamClose ends a stream): %w", p.StreamID, core.ErrInvalid)
	}
	var res store.StreamAppendResult
	err := s.inTx(ctx, func(tx *Store) error {
		head, err := scanStream(tx.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now)))
		if err != nil {
			return tx.wrap(err, "append to stream %s", p.StreamID)
		}
		if head.Closed {
			return fmt.Errorf("append to stream %s: it is closed (its last event has sequence index %d); nothing was appended: %w",
				p.StreamID, head.LastIndex(), core.ErrConflict)
		}
		k := min(len(p.Payloads), head.MaxPending-head.Pending)
		if k <= 0 {
			res.Stream = *head
			return nil
		}
		closing := p.Last && k == len(p.Payloads)
		for off := 0; off < k; off += streamInsertRows {
			n := min(streamInsertRows, k-off)
			if err := tx.insertEnvelopes(ctx, p, head.NextIndex+int64(off), p.Payloads[off:off+n], closing && off+n == k); err != nil {
				return err
			}
		}
		if _, err := tx.tx.ExecContext(ctx, qStreamAdvance, p.StreamID, k, closing, micros(p.Now)); err != nil {
			return tx.wrap(err, "advance stream %s", p.StreamID)
		}
		head.NextIndex += int64(k)
		head.Pending += k
		head.Closed = closing
		res = store.StreamAppendResult{Accepted: k, Stream: *head}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// insertEnvelopes inserts payloads as envelopes from sequence index first;
// last marks the final one is_last.
func (s *Store) insertEnvelopes(ctx context.Context, p *store.StreamAppendParams, first int64, payloads []json.RawMessage, last bool) error {
	var q strings.Builder
	q.WriteString(qStreamEventInsert)
	args := make([]any, 0, 2+3*len(payloads))
	args = append(args, p.StreamID, micros(p.Now))
	for i, pl := range payloads {
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args) + 1
		fmt.Fprintf(&q, "($1, $%d, $%d, $%d, $2)", n, n+1, n+2)
		args = append(args, first+int64(i), string(pl), last && i == len(payloads)-1)
	}
	if _, err := s.tx.ExecContext(ctx, q.String(), args...); err != nil {
		return s.wrap(err, "append %d events to stream %s from sequence index %d", len(payloads), p.StreamID, first)
	}
	return nil
}

// StreamClose closes a stream, marking its last envelope is_last.
func (s *Store) StreamClose(ctx context.Context, p *store.StreamCloseParams) (*core.Stream, error) {
	var out *core.Stream
	err := s.inTx(ctx, func(tx *Store) error {
		head, err := scanStream(tx.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now)))
		if err != nil {
			return tx.wrap(err, "close stream %s", p.StreamID)
		}
		if head.Closed {
			out = head
			return nil
		}
		if head.NextIndex > 0 {
			if _, err := tx.tx.ExecContext(ctx, qStreamMarkLast, p.StreamID, head.LastIndex()); err != nil {
				return tx.wrap(err, "mark the last event of stream %s", p.StreamID)
			}
		}
		if _, err := tx.tx.ExecContext(ctx, qStreamClose, p.StreamID, p.Error, micros(p.Now)); err != nil {
			return tx.wrap(err, "close stream %s", p.StreamID)
		}
		head.Closed, head.Error = true, p.Error
		out = head
		return nil
	})
	return out, err
}

// StreamEventList lists a page of a stream's envelopes in order.
func (s *Store) StreamEventList(ctx context.Context, p *store.StreamEventListParams) ([]core.StreamEvent, error) {
	if p.Limit <= 0 {
		return nil, fmt.Errorf("list events of stream %s: a positive limit is required: %w", p.StreamID, core.ErrInvalid)
	}
	cond := ""
	if p.PendingOnly {
		cond = "AND consumed_at IS NULL"
	}
	rows, err := s.reader().QueryContext(ctx, fmt.Sprintf(qStreamEvents, cond), p.StreamID, p.After, p.Limit)
	if err != nil {
		return nil, s.wrap(err, "list events of stream %s", p.StreamID)
	}
	out, err := collect(rows, scanStreamEvent)
	return out, s.wrap(err, "list events of stream %s", p.StreamID)
}

// StreamConsume marks a range of envelopes consumed.
func (s *Store) StreamConsume(ctx context.Context, p *store.StreamConsumeParams) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx *Store) error {
		// The stream's row first, as appends and closes lock it before its
		// events: the same order everywhere, no deadlock.
		if _, err := scanStream(tx.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now))); err != nil {
			return tx.wrap(err, "consume events of stream %s", p.StreamID)
		}
		res, err := tx.tx.ExecContext(ctx, qStreamConsume, p.StreamID, p.From, p.Through, micros(p.Now))
		if err != nil {
			return tx.wrap(err, "consume events %d..%d of stream %s", p.From, p.Through, p.StreamID)
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return tx.wrap(err, "consume events of stream %s", p.StreamID)
		}
		_, err = tx.tx.ExecContext(ctx, qStreamConsumed, p.StreamID, n, micros(p.Now))
		return tx.wrap(err, "count consumed events of stream %s", p.StreamID)
	})
	return int(n), err
}

// StreamCleanup deletes consumed envelopes and finished streams.
func (s *Store) StreamCleanup(ctx context.Context, before time.Time, limit int) (int, error) {
	res, err := s.writer().ExecContext(ctx, qStreamEventCleanup, micros(before), limit)
	if err != nil {
		return 0, s.wrap(err, "delete consumed stream events")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.wrap(err, "delete consumed stream events")
	}
	if _, err := s.writer().ExecContext(ctx, qStreamCleanup, micros(before)); err != nil {
		return int(n), s.wrap(err, "delete finished streams")
	}
	return int(n), nil
}

func scanStream(r scanner) (*core.Stream, error) {
	var st core.Stream
	var created, updated int64
	if err := r.Scan(&st.ID, &st.MaxPending, &st.NextIndex, &st.Pending, &st.Closed, &st.Error, &created, &updated, &st.TriggerID); err != nil {
		return nil, err
	}
	st.CreatedAt, st.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &st, nil
}

func scanStreamEvent(r *sql.Rows) (core.StreamEvent, error) {
	var (
		e        core.StreamEvent
		payload  string
		created  int64
		consumed sql.NullInt64
	)
	if err := r.Scan(&e.StreamID, &e.SequenceIndex, &payload, &e.IsLast, &created, &consumed); err != nil {
		return e, err
	}
	e.Payload, e.CreatedAt, e.ConsumedAt = json.RawMessage(payload), fromMicros(created), ptrMicros(consumed)
	return e, nil
}

// openProducerStream creates the stream a producer task's trigger
// appends to, or checks that it is still open (a retry of the producer
// resumes it).
func (s *Store) openProducerStream(ctx context.Context, p *store.TaskInstanceDeferParams) error {
	head, err := scanStream(s.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if p.MaxPending < 1 {
			return fmt.Errorf("open stream %s: a max_pending of at least 1 is required: %w", p.StreamID, core.ErrInvalid)
		}
		_, err := s.tx.ExecContext(ctx, qStreamInsert, p.StreamID, p.MaxPending, micros(p.Now))
		return s.wrap(err, "open stream %s", p.StreamID)
	case err != nil:
		return s.wrap(err, "open stream %s", p.StreamID)
	case head.Closed:
		return fmt.Errorf("defer task instance %s: its stream %s is closed (its last event has sequence index %d); nothing changed: %w",
			p.ID, p.StreamID, head.LastIndex(), core.ErrInvalid)
	}
	return nil
}

// TaskInstanceIterate creates a stream-mapped task's next instances and
// consumes their envelopes in one transaction. Lock order as everywhere
// for streams: the stream's head first.
func (s *Store) TaskInstanceIterate(ctx context.Context, p *store.TaskInstanceIterateParams) error {
	what := fmt.Sprintf("iterate task %s of dag run %d over stream %s", p.TaskID, p.DagRunID, p.StreamID)
	if want := p.Through - p.From + 1; want != int64(len(p.Instances)) || (want == 0 && !p.Close) {
		return fmt.Errorf("%s: %d instances given for sequence indexes %d..%d: %w", what, len(p.Instances), p.From, p.Through, core.ErrInvalid)
	}
	return s.inTx(ctx, func(tx *Store) error {
		if _, err := scanStream(tx.tx.QueryRowContext(ctx, qStreamLock, p.StreamID, micros(p.Now))); err != nil {
			return tx.wrap(err, "%s", what)
		}
		var placeholder string
		if err := tx.tx.QueryRowContext(ctx, qTIPlaceholderNone, p.DagRunID, p.TaskID).Scan(&placeholder); err != nil {
			return tx.wrap(err, "%s: find its placeholder in state none", what)
		}
		if len(p.Instances) > 0 {
			res, err := tx.tx.ExecContext(ctx, qStreamConsume, p.StreamID, p.From, p.Through, micros(p.Now))
			if err != nil {
				return tx.wrap(err, "%s: consume events %d..%d", what, p.From, p.Through)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return tx.wrap(err, "%s", what)
			}
			if n != int64(len(p.Instances)) {
				return fmt.Errorf("%s: %d of events %d..%d are pending: %w", what, n, p.From, p.Through, core.ErrConflict)
			}
			if _, err := tx.tx.ExecContext(ctx, qStreamConsumed, p.StreamID, n, micros(p.Now)); err != nil {
				return tx.wrap(err, "%s: count consumed events", what)
			}
			run, err := tx.DagRunGetByID(ctx, p.DagRunID)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if err := tx.insertTIs(ctx, run, p.Instances, p.Now); err != nil {
				return err
			}
		}
		if p.Close {
			if _, err := tx.tx.ExecContext(ctx, qTIDelete, placeholder); err != nil {
				return tx.wrap(err, "%s: remove the placeholder", what)
			}
		}
		return nil
	})
}
