package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weirflow/weir/internal/core"
)

// PoolUpsert creates a pool or changes its slots and description.
func (s *Store) PoolUpsert(ctx context.Context, p *core.Pool) error {
	if p.Name == "" || p.Slots < 0 {
		return fmt.Errorf("save pool %q: name must be set and slots must be >= 0: %w", p.Name, core.ErrInvalid)
	}
	_, err := s.writer().ExecContext(ctx, qPoolUpsert, p.Name, p.Slots, p.Description)
	return s.wrap(err, "save pool %s", p.Name)
}

// PoolList lists pools by name.
func (s *Store) PoolList(ctx context.Context) ([]core.Pool, error) {
	rows, err := s.reader().QueryContext(ctx, qPoolList)
	if err != nil {
		return nil, s.wrap(err, "list pools")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.Pool, error) {
		var p core.Pool
		return p, r.Scan(&p.Name, &p.Slots, &p.Description)
	})
	return out, s.wrap(err, "list pools")
}

// PoolDelete removes a pool; the default pool cannot be removed
// (ErrInvalid), an unknown one gives ErrNotFound.
func (s *Store) PoolDelete(ctx context.Context, name string) error {
	if name == core.DefaultPool {
		return fmt.Errorf("delete pool %s: the default pool cannot be deleted: %w", name, core.ErrInvalid)
	}
	return s.execOne(ctx, "delete pool "+name, qPoolDelete, name)
}

// ConnectionUpsert creates or replaces a connection.
func (s *Store) ConnectionUpsert(ctx context.Context, c *core.Connection) error {
	_, err := s.writer().ExecContext(ctx, qConnUpsert, c.ID, c.URI)
	return s.wrap(err, "save connection %s", c.ID)
}

// ConnectionGet returns a connection or ErrNotFound.
func (s *Store) ConnectionGet(ctx context.Context, id string) (*core.Connection, error) {
	var c core.Connection
	if err := s.reader().QueryRowContext(ctx, qConnGet, id).Scan(&c.ID, &c.URI); err != nil {
		return nil, s.wrap(err, "get connection %s", id)
	}
	return &c, nil
}

// ConnectionList lists connections by id.
func (s *Store) ConnectionList(ctx context.Context) ([]core.Connection, error) {
	rows, err := s.reader().QueryContext(ctx, qConnList)
	if err != nil {
		return nil, s.wrap(err, "list connections")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.Connection, error) {
		var c core.Connection
		return c, r.Scan(&c.ID, &c.URI)
	})
	return out, s.wrap(err, "list connections")
}

// ConnectionDelete removes a connection; ErrNotFound when absent.
func (s *Store) ConnectionDelete(ctx context.Context, id string) error {
	return s.execOne(ctx, "delete connection "+id, qConnDelete, id)
}

// JobHeartbeat records that a process is alive (its start time is kept from
// the first heartbeat).
func (s *Store) JobHeartbeat(ctx context.Context, j *core.Job) error {
	_, err := s.writer().ExecContext(ctx, qJobUpsert, j.ID, j.Role, j.Hostname, j.PID, micros(j.StartedAt),
		micros(j.Heartbeat))
	return s.wrap(err, "heartbeat job %s (%s)", j.ID, j.Role)
}

// JobList lists known processes by role.
func (s *Store) JobList(ctx context.Context) ([]core.Job, error) {
	rows, err := s.reader().QueryContext(ctx, qJobList)
	if err != nil {
		return nil, s.wrap(err, "list jobs")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.Job, error) {
		var (
			j             core.Job
			started, beat int64
		)
		err := r.Scan(&j.ID, &j.Role, &j.Hostname, &j.PID, &started, &beat)
		j.StartedAt, j.Heartbeat = fromMicros(started), fromMicros(beat)
		return j, err
	})
	return out, s.wrap(err, "list jobs")
}

// AuditLogAdd appends an entry and writes its id back into e.
func (s *Store) AuditLogAdd(ctx context.Context, e *core.AuditEntry) error {
	err := s.writer().QueryRowContext(ctx, qAuditInsert, micros(e.When), e.User, e.Action, e.Target, e.Detail).Scan(&e.ID)
	return s.wrap(err, "add audit log entry %s %s", e.Action, e.Target)
}

// AuditLogList returns the newest entries first (all when limit <= 0).
func (s *Store) AuditLogList(ctx context.Context, limit int) ([]core.AuditEntry, error) {
	if limit <= 0 {
		limit = 1 << 31
	}
	rows, err := s.reader().QueryContext(ctx, qAuditList, limit)
	if err != nil {
		return nil, s.wrap(err, "list audit log")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.AuditEntry, error) {
		var (
			e  core.AuditEntry
			at int64
		)
		err := r.Scan(&e.ID, &at, &e.User, &e.Action, &e.Target, &e.Detail)
		e.When = fromMicros(at)
		return e, err
	})
	return out, s.wrap(err, "list audit log")
}
