// Package service is the one home of Weir's state-changing rules. Every
// change a person, a program or a Weir component makes — trigger a run,
// pause a DAG, clear or mark task instances, finish a try, record an asset
// event, edit pools, connections, users and API tokens — is one method
// here that authorizes the actor, changes the store in one transaction,
// writes the audit entry in that transaction and notifies whoever must
// react (the scheduler, waiting workers). The REST API, the Execution API,
// the CLI, the scheduler (and the triggerer and UI to come) call these
// methods and only translate between their wire format and the service;
// none of them writes to the store directly.
//
// Pure rules (retry back-off, initial task instances, run ids, which task
// instances a clear selects) live in package runs, with table tests; this
// package adds the transactions, the audit and the notifications.
// See docs/adr/0009-service-layer.md.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"

	"github.com/weirflow/weir/internal/audit"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/groupcommit"
	"github.com/weirflow/weir/internal/runs"
	"github.com/weirflow/weir/internal/store"
	"github.com/weirflow/weir/internal/trigger"
	"github.com/weirflow/weir/internal/trigger/builtin"
)

// Config is what a Service needs. Store is required.
type Config struct {
	Store  store.Store
	Clock  core.Clock   // nil = core.SystemClock
	Logger *slog.Logger // nil = discard
	// ClearTaskStateOnSuccess is [state_store] clear_on_success: a try
	// that succeeds deletes its task instance's task state in the same
	// transaction.
	ClearTaskStateOnSuccess bool
	// RunIDPattern is [scheduler] allowed_run_id_pattern, which every run
	// id a trigger chooses must match; nil = core.DefaultRunIDPattern.
	RunIDPattern *regexp.Regexp
	// Triggers are the trigger types deferrals may name; nil = the
	// built-in ones.
	Triggers *trigger.Registry
	// Deferrals bound the triggers a running task may defer on.
	Deferrals runs.DeferralRules
	// MaxEventExtraBytes bounds an emitted asset event's extra; 0 =
	// emission.DefaultMaxExtraBytes.
	MaxEventExtraBytes int
	// StreamMaxPending is [triggerer] stream_max_pending, the bound on a
	// stream's unconsumed events when its opener gives none; 0 =
	// core.DefaultStreamMaxPending.
	StreamMaxPending int
	// MaxCallbackChainDepth is [callbacks] max_chain_depth, the feedback
	// loop guard: an asset_event notifier's event may be at most this deep
	// in a chain of callback events (docs/emission.md#feedback-loops); 0 =
	// DefaultMaxCallbackChainDepth.
	MaxCallbackChainDepth int
	// OnlyDagID, when set, is the one DAG this process runs, paused or
	// not (weir dags test): only its instances are queued, and only its
	// try ends schedule their successors.
	OnlyDagID string
	// OnQueued, if set, is told of the task instances each committed
	// queueing queued, and who queued them (QueuedBy*).
	OnQueued func(by string, n int)
	// GroupTryEnds records concurrent try ends in one transaction
	// (groupcommit; GroupTryEnds decides it for an api-server).
	GroupTryEnds bool
}

// Service carries out state-changing operations. It is safe for
// concurrent use.
type Service struct {
	st             store.Store
	clock          core.Clock
	log            *slog.Logger
	clearOnSuccess bool
	triggerRules   runs.TriggerRules
	versions       store.VersionCache
	triggers       *trigger.Registry
	deferrals      runs.DeferralRules
	maxExtra       int
	maxPending     int
	maxChainDepth  int
	onlyDagID      string
	onQueued       func(by string, n int)
	ends           *groupcommit.Group[*endRequest] // nil: each end commits alone
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Triggers == nil {
		cfg.Triggers = builtin.Registry()
	}
	if cfg.StreamMaxPending <= 0 {
		cfg.StreamMaxPending = core.DefaultStreamMaxPending
	}
	if cfg.MaxCallbackChainDepth <= 0 {
		cfg.MaxCallbackChainDepth = DefaultMaxCallbackChainDepth
	}
	s := &Service{st: cfg.Store, clock: cfg.Clock, log: cfg.Logger, clearOnSuccess: cfg.ClearTaskStateOnSuccess,
		triggerRules: runs.TriggerRules{RunIDPattern: cfg.RunIDPattern}, triggers: cfg.Triggers, deferrals: cfg.Deferrals,
		maxExtra: cfg.MaxEventExtraBytes, maxPending: cfg.StreamMaxPending, maxChainDepth: cfg.MaxCallbackChainDepth,
		onlyDagID: cfg.OnlyDagID, onQueued: cfg.OnQueued}
	if cfg.GroupTryEnds {
		s.ends = &groupcommit.Group[*endRequest]{Max: maxEndGroup, Commit: s.commitEnds,
			Fail: func(r *endRequest, err error) { r.err = err }}
	}
	return s
}

// Triggers returns the trigger types deferrals may name.
func (s *Service) Triggers() *trigger.Registry { return s.triggers }

// Store returns the store the service writes to (read paths use it too).
func (s *Service) Store() store.Store { return s.st }

// DagVersion returns a DAG version by id from a cache shared by every
// caller of this service (versions never change).
func (s *Service) DagVersion(ctx context.Context, id int64) (*core.DagVersion, error) {
	v, err := s.versions.Get(ctx, s.st, id)
	if err != nil {
		return nil, fmt.Errorf("load dag version %d: %w", id, err)
	}
	return v, nil
}

// change is one audited operation: what it needs, what it records, and
// which channels hear of it after commit.
type change struct {
	actor  core.Actor
	need   core.Role
	action string // audit action; what the error of a refusal names
	target string
	notify []string
}

// errNoChange is what a change's fn returns when it finds nothing to do:
// the transaction rolls back, nothing is audited or notified, and do
// returns nil.
var errNoChange = errors.New("nothing to change")

// do authorizes c.actor, then runs fn in one transaction together with the
// audit entry and the notifications (sent after commit). fn may set
// c.target and the detail once it knows them.
func (s *Service) do(ctx context.Context, c *change, fn func(tx store.Store, detail *string) error) error {
	if err := c.actor.Authorize(c.need, c.action); err != nil {
		return err
	}
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		var detail string
		if err := fn(tx, &detail); err != nil {
			return err
		}
		if err := audit.Record(ctx, tx, s.clock.Now(), c.actor, c.action, c.target, detail); err != nil {
			return err
		}
		for _, ch := range c.notify {
			if err := tx.Notify(ctx, ch); err != nil {
				return fmt.Errorf("%s: notify %s: %w", c.action, ch, err)
			}
		}
		return nil
	})
	if errors.Is(err, errNoChange) {
		return nil
	}
	return err
}
