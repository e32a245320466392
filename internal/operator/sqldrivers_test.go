package operator

// The sql operator's tests link the drivers that internal/cli links in the
// weir binary.
import (
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)
