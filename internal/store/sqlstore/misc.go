package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// PoolUpsert creates a pool or changes its slots and description.
func (s *Store) PoolUpsert(ctx context.Context, p *core.Pool) error {
	if p.Name == "" || p.Slots < 0 {
		return fmt.Errorf("save pool %q: name must be set and slots must be >= 0: %w", p.Name, core.ErrInvalid)
	}
	_, err := s.writer().ExecContext(ctx, qPoolUpsert, p.Name, p.Slots, p.Description)
	return s.wrap(err, "save pool %s", p.Name)
}

// PoolList lists a page of pools (by name unless p.OrderBy says otherwise).
func (s *Store) PoolList(ctx context.Context, p *store.PoolListParams) ([]core.Pool, error) {
	query := qPoolList
	if p.WithOccupancy {
		query = qPoolListOccupied
	}
	return listPage(ctx, s, "list pools", query, poolFilter(p), &poolOrder, p.Page, func(r scanner) (*core.Pool, error) {
		var pool core.Pool
		err := r.Scan(&pool.Name, &pool.Slots, &pool.Description, &pool.RunningSlots, &pool.QueuedSlots, &pool.ScheduledSlots,
			&pool.DeferredSlots)
		pool.OccupiedSlots = pool.RunningSlots + pool.QueuedSlots
		return &pool, err
	})
}

// PoolCount counts the pools PoolList would list without paging.
func (s *Store) PoolCount(ctx context.Context, p *store.PoolListParams) (int, error) {
	return s.count(ctx, "count pools", qPoolCount, poolFilter(p))
}

// poolFilter is the WHERE clause of PoolList and PoolCount.
func poolFilter(p *store.PoolListParams) *builder {
	var b builder
	in(&b, "p.pool", p.Names)
	b.containsFold("p.pool", p.Search)
	return &b
}

// PoolDelete removes a pool; the default pool cannot be removed
// (ErrInvalid), an unknown one gives ErrNotFound.
func (s *Store) PoolDelete(ctx context.Context, name string) error {
	if name == core.DefaultPool {
		return fmt.Errorf("delete pool %s: the default pool cannot be deleted: %w", name, core.ErrInvalid)
	}
	return s.execOne(ctx, "delete pool "+name, qPoolDelete, name)
}

// ConnectionCount counts the connections.
func (s *Store) ConnectionCount(ctx context.Context, p *store.ConnectionListParams) (int, error) {
	return s.count(ctx, "count connections", qConnCount, searched("conn_id", p.Search))
}

// searched is the WHERE clause of a list whose column col contains text,
// ignoring case (none for an empty text).
func searched(col, text string) *builder {
	var b builder
	b.containsFold(col, text)
	return &b
}

// ConnectionDelete removes a connection; ErrNotFound when absent.
func (s *Store) ConnectionDelete(ctx context.Context, id string) error {
	return s.execOne(ctx, "delete connection "+id, qConnDelete, id)
}

// JobHeartbeat records that a process is alive (its start time is kept from
// the first heartbeat).
func (s *Store) JobHeartbeat(ctx context.Context, j *core.Job) error {
	var upSince int64
	if !j.UpSince.IsZero() {
		upSince = micros(j.UpSince)
	}
	_, err := s.writer().ExecContext(ctx, qJobUpsert, j.ID, j.Role, j.Hostname, j.PID, micros(j.StartedAt),
		micros(j.Heartbeat), j.WorkerID, j.Interval.Microseconds(), upSince, j.Version)
	return s.wrap(err, "heartbeat job %s (%s)", j.ID, j.Role)
}

// WorkerHeartbeat records that a worker process is alive (its job row) and
// refreshes the tries it holds, in one transaction.
func (s *Store) WorkerHeartbeat(ctx context.Context, p *store.WorkerHeartbeatParams) error {
	j := p.Job
	if j.WorkerID == "" {
		return fmt.Errorf("worker heartbeat: empty worker id: %w", core.ErrInvalid)
	}
	return s.inTx(ctx, func(tx *Store) error {
		if err := tx.JobHeartbeat(ctx, &j); err != nil {
			return err
		}
		if len(p.Holding) == 0 {
			return nil
		}
		for _, q := range []string{qTIWorkerBeatRunning, qTIWorkerBeatClaimed} {
			b := builder{args: []any{j.WorkerID, micros(j.Heartbeat)}}
			if _, err := tx.writer().ExecContext(ctx, fmt.Sprintf(q, list(&b, p.Holding), s.d.ClaimLock), b.args...); err != nil {
				return s.wrap(err, "refresh the tries of worker %s", j.WorkerID)
			}
		}
		return nil
	})
}

// JobList lists known processes by role.
func (s *Store) JobList(ctx context.Context) ([]core.Job, error) {
	rows, err := s.reader().QueryContext(ctx, qJobList)
	if err != nil {
		return nil, s.wrap(err, "list jobs")
	}
	out, err := collect(rows, func(r *sql.Rows) (core.Job, error) { return scanJob(r) })
	return out, s.wrap(err, "list jobs")
}

// WorkerLastBeat returns the latest job row of worker workerID's processes.
func (s *Store) WorkerLastBeat(ctx context.Context, workerID string) (*core.Job, error) {
	j, err := scanJob(s.reader().QueryRowContext(ctx, qWorkerLastBeat, workerID))
	if err != nil {
		return nil, s.wrap(err, "read the last heartbeat of worker %s", workerID)
	}
	return &j, nil
}

// scanJob reads a job row (qJobList's columns).
func scanJob(r scanner) (core.Job, error) {
	var (
		j                                core.Job
		started, beat, interval, upSince int64
	)
	err := r.Scan(&j.ID, &j.Role, &j.Hostname, &j.PID, &started, &beat, &j.WorkerID, &interval, &upSince, &j.Version)
	j.StartedAt, j.Heartbeat, j.Interval = fromMicros(started), fromMicros(beat), time.Duration(interval)*time.Microsecond
	if upSince != 0 {
		j.UpSince = fromMicros(upSince)
	}
	return j, err
}

// JobPrune deletes the job rows of processes whose latest heartbeat is
// older than before and returns how many it deleted.
func (s *Store) JobPrune(ctx context.Context, before time.Time) (int64, error) {
	return s.deleteJobs(ctx, "prune job rows silent since "+before.UTC().Format(time.RFC3339), qJobPrune, micros(before))
}

// JobDeleteOfProcess deletes the job rows of process pid on hostname and
// returns how many it deleted.
func (s *Store) JobDeleteOfProcess(ctx context.Context, hostname string, pid int) (int64, error) {
	return s.deleteJobs(ctx, fmt.Sprintf("delete the job rows of process %d on %s", pid, hostname), qJobDeleteOfProcess, hostname, pid)
}

// deleteJobs runs a deletion of job rows and returns how many it deleted.
func (s *Store) deleteJobs(ctx context.Context, what, query string, args ...any) (int64, error) {
	res, err := s.writer().ExecContext(ctx, query, args...)
	if err != nil {
		return 0, s.wrap(err, "%s", what)
	}
	n, err := res.RowsAffected()
	return n, s.wrap(err, "%s", what)
}

// AuditLogAdd appends an entry and writes its id back into e.
func (s *Store) AuditLogAdd(ctx context.Context, e *core.AuditEntry) error {
	err := s.writer().QueryRowContext(ctx, qAuditInsert, micros(e.When), e.User, e.Action, e.Target, e.Detail).Scan(&e.ID)
	return s.wrap(err, "add audit log entry %s %s", e.Action, e.Target)
}

// AuditLogList lists a page of entries (newest first unless p.OrderBy says
// otherwise), from p.Cursor when set.
func (s *Store) AuditLogList(ctx context.Context, p *store.AuditLogListParams) ([]core.AuditEntry, error) {
	b := auditFilter(p)
	if err := cursor(b, "id", "event_log_id", p.Cursor, p.Page); err != nil {
		return nil, fmt.Errorf("list audit log: %w", err)
	}
	return listPage(ctx, s, "list audit log", qAuditList, b, &auditOrder, p.Page, func(r scanner) (*core.AuditEntry, error) {
		var (
			e  core.AuditEntry
			at int64
		)
		err := r.Scan(&e.ID, &at, &e.User, &e.Action, &e.Target, &e.Detail)
		e.When = fromMicros(at)
		return &e, err
	})
}

// AuditLogCount counts the entries AuditLogList would list without paging
// and without the cursor.
func (s *Store) AuditLogCount(ctx context.Context, p *store.AuditLogListParams) (int, error) {
	return s.count(ctx, "count audit log", qAuditCount, auditFilter(p))
}

// auditFilter is the WHERE clause of AuditLogList and AuditLogCount.
func auditFilter(p *store.AuditLogListParams) *builder {
	var b builder
	for _, f := range []struct{ col, v string }{{"action", p.Action}, {"username", p.User}} {
		if f.v != "" {
			b.where(f.col+" = ?", f.v)
		}
	}
	if p.Target != "" { // the target, or what lies under it: a DAG's runs and tasks
		b.where(`(target = ? OR target LIKE ? ESCAPE '\')`, p.Target, likeEscape(p.Target)+"/%")
	}
	return &b
}
