package cli

// The `sql` operator (internal/operator) opens a task's connection through
// database/sql under the driver names "pgx" and "sqlite". The drivers are
// linked here, where the binary is wired, and not by the operator, so that
// the worker's import graph holds no database driver
// (internal/worker/isolation_test.go).
import (
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)
