package core

import (
	"fmt"
	"time"
)

// User is a person who logs in.
type User struct {
	Username     string
	PasswordHash string // bcrypt
	Role         string // admin | op | viewer
	CreatedAt    time.Time
	// SessionEpoch is signed into each login session; moving it on (a
	// logout, a new password) ends the sessions signed before. It only
	// grows, and a user created anew starts at a random one, so that a
	// deleted user's sessions never fit a new user of the same name.
	SessionEpoch int64
}

// LoginTokenName names the API tokens a password issues (POST
// /api/v2/auth/token, `weir login`): a new password revokes them.
const LoginTokenName = "weir login"

// APIToken is a bearer token for scripts; only its hash is stored.
type APIToken struct {
	ID        string
	Name      string
	Username  string
	Hash      string
	CreatedAt time.Time
	ExpiresAt *time.Time
}

// Connection is a named external system (database, HTTP service).
type Connection struct {
	ID  string
	URI string // e.g. postgres://user:pass@host/db, sqlite:///path, https://host
	// Undecryptable says why a listed connection's URI (then empty) could
	// not be decrypted here: sealed under a key this node's key file lacks,
	// or tampered with. "" = URI is the connection's.
	Undecryptable string
}

// Variable is one of Airflow's Variables: a string value under a key,
// with a description (docs/variables.md).
type Variable struct {
	Key         string
	Value       string
	Description string
	// Undecryptable says why a listed variable's value (then empty) could
	// not be decrypted here, as Connection.Undecryptable does.
	Undecryptable string
}

// Job is one running Weir process.
type Job struct {
	ID        string
	Role      string
	Hostname  string
	PID       int
	StartedAt time.Time
	Heartbeat time.Time
	// WorkerID is a worker process's worker name (its credential's
	// subject, the worker_id of the tries it claims); "" for other roles.
	WorkerID string
	// Interval is how often the process heartbeats; 0 = not recorded.
	Interval time.Duration
	// UpSince is when the process's current unbroken run of heartbeats
	// began: a write that failed or came more than two intervals after
	// the last starts a new run (zero = none recorded: StartedAt).
	UpSince time.Time
	// Version is the Weir version the process runs; "" = not recorded.
	Version string
}

// AuditEntry records one administrative action.
type AuditEntry struct {
	ID     int64
	When   time.Time
	User   string
	Action string // e.g. "dag.pause", "task_instance.clear"
	Target string
	Detail string
}

// Role is what a user may do: a viewer reads, an op also triggers, clears,
// marks and pauses, an admin also manages pools and connections.
type Role string

// Roles, from least to most privileged.
const (
	RolePublic Role = ""       // no authentication needed (health, version, login)
	RoleViewer Role = "viewer" // read-only
	RoleOp     Role = "op"     // viewer + trigger, clear, mark, pause
	RoleAdmin  Role = "admin"  // everything
)

// rank orders roles; unknown roles rank below viewer.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleOp:
		return 2
	case RoleAdmin:
		return 3
	default: // RolePublic and unknown roles
		return 0
	}
}

// Valid reports whether r is one of viewer, op, admin.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether a principal of role r may call an operation that
// needs role need.
func (r Role) Allows(need Role) bool { return need == RolePublic || r.rank() >= need.rank() }

// Actor is who asks for a change: the name the audit log records and the
// role that authorizes it. A user of the REST API or UI is an Actor with
// their role; the admin CLI acts as "cli:<os user>" with RoleAdmin (it
// holds the database credentials); Weir's own components are System.
type Actor struct {
	Name string
	Role Role
}

// System is Weir itself (scheduler, triggerer, cleanup): allowed
// everything, and its changes are not audited.
var System = Actor{Role: RoleAdmin}

// IsSystem reports whether a is Weir itself rather than a person or program.
func (a Actor) IsSystem() bool { return a == System }

// Authorize returns nil when a may do action, which needs role need; else
// an error wrapping ErrForbidden that names the actor, its role and what
// was needed.
func (a Actor) Authorize(need Role, action string) error {
	if a.Role.Allows(need) {
		return nil
	}
	return fmt.Errorf("%s (role %q) may not %s: it needs role %q: %w", a.Name, a.Role, action, need, ErrForbidden)
}

// CredentialRevocation refuses every credential of Scope issued to Subject
// at or before RevokedBefore (worker credentials: Scope "worker", Subject
// the worker name).
type CredentialRevocation struct {
	Scope         string
	Subject       string
	RevokedBefore time.Time
	RevokedBy     string // the actor who revoked
}
