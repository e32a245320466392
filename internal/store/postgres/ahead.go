package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"slices"

	"github.com/jackc/pgx/v5"
)

// aheadRows are the rows of a query marked sqlstore.Ahead: it waits with
// the transaction's deferred statements and goes with the next statement
// sent, its rows then read from the batch into memory; reading them before
// that sends it (with what waits). Closed before it was sent, it is not
// sent at all. They are read once, as database/sql reads a driver's rows
// (under the connection's lock, as every use of the connection).
type aheadRows struct {
	c       *pipelineConn
	ctx     context.Context // the query's, for a send of its own
	sent    bool            // it was sent, or will never be (err says why)
	err     error           // the query's failure, or why it was never sent
	columns []string
	rows    [][]driver.Value
}

// errAheadDropped is the error of a query that waited when its transaction
// ended without sending it.
var errAheadDropped = errors.New("postgres: the transaction ended before its query was sent (sqlstore.Ahead)")

// fill reads the query's rows, the next result of br, into r.
func (r *aheadRows) fill(br pgx.BatchResults) error {
	r.sent = true
	rows, err := br.Query()
	if err != nil {
		r.err = err
		return err
	}
	for _, fd := range rows.FieldDescriptions() {
		r.columns = append(r.columns, fd.Name)
	}
	each := &batchRows{rows: rows, close: func() error { return nil }, types: r.c.Conn.Conn().TypeMap(), read: true}
	for {
		row := make([]driver.Value, len(r.columns))
		if err := each.Next(row); err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			break
		}
		r.rows = append(r.rows, row)
	}
	rows.Close()
	if r.err == nil {
		r.err = rows.Err()
	}
	return r.err
}

// failed marks r sent in a batch that failed before it: the server
// skipped it, and err, the batch's failure, is its error.
func (r *aheadRows) failed(err error) { r.sent, r.err = true, err }

// drop marks r never sent: its transaction ended first.
func (r *aheadRows) drop() {
	if !r.sent {
		r.sent, r.err = true, errAheadDropped
	}
}

// send sends the query, with what waits, when no statement carried it yet.
// A failure before anything was sent (the context ended, the connection is
// gone) is returned, not kept: the query still waits.
func (r *aheadRows) send() error {
	if r.sent {
		return nil
	}
	if err := r.c.flush(r.ctx); err != nil && !r.sent {
		return err
	}
	return nil
}

func (r *aheadRows) Columns() []string {
	_ = r.send() // its failure is Next's
	return r.columns
}

func (r *aheadRows) Next(dest []driver.Value) error {
	if err := r.send(); err != nil {
		return err
	}
	if r.err != nil {
		return r.err
	}
	if len(r.rows) == 0 {
		return io.EOF
	}
	copy(dest, r.rows[0])
	r.rows = r.rows[1:]
	return nil
}

// Close forgets the rows; a query not sent yet is taken out of what waits
// (nobody reads it).
func (r *aheadRows) Close() error {
	if !r.sent {
		r.c.waiting = slices.DeleteFunc(r.c.waiting, func(w waitingExec) bool { return w.ahead == r })
		r.drop()
	}
	r.rows = nil
	return nil
}
