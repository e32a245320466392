package postgres

import (
	"context"
	"database/sql"
	"fmt"
)

// Room is what a PostgreSQL server has left for the connections of one
// more process (docs/deployment.md#pool-sizing).
type Room struct {
	MaxConnections int // max_connections
	Reserved       int // superuser_reserved_connections + reserved_connections (PostgreSQL 16+)
	InUse          int // client connections of other processes
	Need           int // this process's: the pool's size + its LISTEN connection
}

// Free is how many more connections the server accepts.
func (r Room) Free() int { return r.MaxConnections - r.Reserved - r.InUse }

// Fits reports whether this process's connections fit in what is free.
func (r Room) Fits() bool { return r.Need <= r.Free() }

// String says why the pool does not fit and what to change.
func (r Room) String() string {
	return fmt.Sprintf("this process may hold %d connections to PostgreSQL ([database] pool_size %d + 1 LISTEN), "+
		"but the server has %d left (max_connections %d - reserved %d - %d in use by other processes): "+
		"under load its loops will wait for connections or fail to connect; lower [database] pool_size "+
		"or raise max_connections (docs/deployment.md#pool-sizing)",
		r.Need, r.Need-1, max(r.Free(), 0), r.MaxConnections, r.Reserved, r.InUse)
}

// qRoom reads the server's limits and the client connections of others
// (every one but the asking connection's).
const qRoom = `SELECT current_setting('max_connections')::int,
	current_setting('superuser_reserved_connections')::int
		+ COALESCE(NULLIF(current_setting('reserved_connections', true), ''), '0')::int,
	(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())::int`

// roomFor measures the server's room for a pool of poolSize plus a
// LISTEN connection. db must hold one connection only (just opened), so
// that every other client connection is another process's.
func roomFor(ctx context.Context, db *sql.DB, poolSize int) (Room, error) {
	r := Room{Need: poolSize + 1}
	err := db.QueryRowContext(ctx, qRoom).Scan(&r.MaxConnections, &r.Reserved, &r.InUse)
	if err != nil {
		return r, fmt.Errorf("read max_connections and connections in use: %w", err)
	}
	return r, nil
}
