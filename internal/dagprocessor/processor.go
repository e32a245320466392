// Package dagprocessor keeps the store's DAGs in step with the DAG folder:
// it scans the folder for YAML files, re-parses only files that changed,
// records each DAG (a new dag_version when its definition changed), records
// an import error for each broken file and clears it once the file loads
// again, and deactivates DAGs whose file is gone. Every scan reconciles the
// store's active flags with what the folder defines, so a flag set wrongly
// (by another process) heals within one scan; the processor is the only
// component that deactivates a DAG. DAGs compiled into the
// binary with the Go SDK (Extra) are validated and recorded the same way.
//
// Files are read and parsed within the limits of a dagfile.Loader (size,
// nesting, parse time: docs/dag-files.md#limits), so no file can take the
// process down; a file over a limit is an import error like any other.
//
// A broken file never affects other files' DAGs; its own DAGs stay active
// at their last good version until it is fixed or removed. A dag_id that two
// files define belongs to the file that defined it first; the other file
// gets an import error.
package dagprocessor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/dagfile"
	"github.com/weirflow/weir/internal/schedule"
	"github.com/weirflow/weir/internal/store"
)

// DefaultInterval is how often Start rescans the folder when Interval is 0.
const DefaultInterval = 5 * time.Second

// Processor syncs DAG files and Go SDK DAGs into the store. Set the
// exported fields before the first call; SyncOnce and Start may then be
// called from any goroutine (calls are serialized).
type Processor struct {
	Store    Store
	Dir      string        // DAG folder, scanned recursively for *.yaml and *.yml; "" = none
	Extra    []core.DAG    // Go SDK DAGs; FileLoc names their source (such as "go:mybinary")
	Clock    core.Clock    // nil = system clock
	Logger   *slog.Logger  // nil = discard
	Interval time.Duration // rescan period of Start; 0 = DefaultInterval
	PauseNew bool          // new DAGs start paused (Airflow's dags_are_paused_at_creation)
	// DefaultTimezone is given to DAGs that name no timezone ([core]
	// default_timezone); "" = UTC.
	DefaultTimezone string
	// CronTriggers gives a DAG whose cron schedule names no timetable
	// CronTriggerTimetable rather than CronDataIntervalTimetable
	// ([scheduler] create_cron_data_intervals = false).
	CronTriggers bool
	// Loader reads and parses DAG files within the [dag_processor] limits;
	// nil = dagfile.NewLoader(0, 0), the default limits.
	Loader *dagfile.Loader
	// Parser names the program and loader options that parse the files:
	// a file whose bytes were parsed by the same Parser before (recorded
	// with DagFileSet by any process) is not parsed again, its recorded
	// DAGs or error are used. "" = every file is parsed, nothing recorded.
	Parser string

	mu       sync.Mutex
	files    map[string]*fileState    // by path
	owner    map[string]string        // dag_id → file path or Extra FileLoc that defines it
	synced   map[string]string        // dag_id → hash last recorded with DagSync
	unused   map[string]store.DagFile // file path → its recorded parse, until its first read
	recorded map[string]bool          // file paths with a recorded parse
	parses   int                      // files parsed, for tests
	loader   *dagfile.Loader          // Loader, or the default one
	// lazyDAGs: the recorded parses were listed without their DAGs, read
	// (DagFileGet) when one of a file's is needed (RecordOne's first load).
	lazyDAGs bool
}

// Start syncs at once and then every Interval until ctx is done; it
// returns nil then. A failed sync is logged and retried on the next tick.
func (p *Processor) Start(ctx context.Context) error {
	interval := p.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := p.SyncOnce(ctx); err != nil && ctx.Err() == nil {
			p.logger().Warn("dag processor sync failed", "dir", p.Dir, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// SyncOnce scans the folder once and brings the store up to date. It
// returns an error when the folder cannot be read (nothing is changed then)
// or a store call failed; broken DAG files are not errors of SyncOnce but
// import errors in the store.
func (p *Processor) SyncOnce(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	plan, err := p.load(ctx)
	if err != nil {
		return err
	}
	now := p.now()
	keep := plan.keep()
	extra, err := p.reconcileActive(ctx, keep)
	if err != nil {
		return err
	}

	var errs []error
	changed := false
	for _, fd := range plan.dags {
		d, err := fd.DAG(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		before := p.synced[d.DagID]
		if err := p.sync(ctx, &d, now); errors.Is(err, core.ErrConflict) {
			// Another DAG defines one of its assets differently: the DAG
			// keeps its last good version and its file shows why.
			plan.importErrors[d.FileLoc] = joinMsg(plan.importErrors[d.FileLoc], err.Error())
		} else if err != nil {
			errs = append(errs, err)
		}
		changed = changed || p.synced[d.DagID] != before
	}
	if changed { // new or changed DAGs: let the scheduler look at them now
		if err := p.Store.Notify(ctx, store.ChannelScheduler); err != nil {
			errs = append(errs, fmt.Errorf("wake scheduler: %w", err))
		}
	}
	if err := p.syncImportErrors(ctx, plan.importErrors, now); err != nil {
		errs = append(errs, err)
	}
	if extra {
		if err := p.Store.DagDeactivateMissing(ctx, &store.DagDeactivateParams{Keep: keep}); err != nil {
			errs = append(errs, fmt.Errorf("deactivate missing dags: %w", err))
		}
		if _, err := p.Store.AssetDeactivateOrphans(ctx, now); err != nil {
			errs = append(errs, fmt.Errorf("deactivate orphaned assets: %w", err))
		}
	}
	// Forget what was recorded for DAGs no longer defined, so that a DAG
	// coming back is recorded (and reactivated) again.
	for id := range p.synced {
		if _, ok := plan.owner[id]; !ok {
			delete(p.synced, id)
		}
	}
	p.owner = plan.owner
	return errors.Join(errs...)
}

// load scans the folder, re-reads what changed and plans who owns each
// dag_id; p.mu must be held.
func (p *Processor) load(ctx context.Context) (*plan, error) {
	if p.files == nil {
		if err := p.init(ctx); err != nil {
			return nil, err
		}
	}
	paths, err := p.scan()
	if err != nil {
		return nil, fmt.Errorf("scan dag folder %s: %w", p.Dir, err)
	}
	if err := p.refreshAll(ctx, paths); err != nil {
		return nil, err
	}
	return p.plan(paths), nil
}

// init learns which source owns each active DAG from the store, so that
// after a restart a broken file keeps its DAGs and the first owner of a
// dag_id keeps it.
func (p *Processor) init(ctx context.Context) error {
	dags, err := p.Store.DagList(ctx, &store.DagListParams{OnlyActive: true})
	if err != nil {
		return fmt.Errorf("list dags: %w", err)
	}
	p.files, p.owner, p.synced = map[string]*fileState{}, map[string]string{}, map[string]string{}
	if p.loader = p.Loader; p.loader == nil {
		p.loader = dagfile.NewLoader(0, 0)
	}
	for _, d := range dags {
		if p.ours(d.FileLoc) {
			p.owner[d.DagID] = d.FileLoc
		}
	}
	return p.initParsed(ctx)
}

// sync records one DAG unless the same definition was already recorded.
func (p *Processor) sync(ctx context.Context, d *core.DAG, now time.Time) error {
	if d.Timezone == "" && p.DefaultTimezone != "" && p.DefaultTimezone != "UTC" {
		d.Timezone = p.DefaultTimezone
	}
	if d.Timetable == "" && p.CronTriggers && schedule.IsCron(d.Schedule) {
		d.Timetable = schedule.CronTriggerTimetable
	}
	hash := dagfile.Hash(d)
	if p.synced[d.DagID] == hash {
		return nil
	}
	var (
		version int64
		change  store.DagSyncChange
		ws      = dagfile.Warnings(d)
	)
	// Two processors recording a new DAG, version or asset at once
	// (schedulers started together) both find none and both insert: the
	// loser's transaction runs again and finds the winner's rows.
	err := retryConflict(func() error {
		return p.Store.WithTx(ctx, func(tx store.Store) error {
			var err error
			version, change, err = tx.DagSync(ctx, &store.DagSyncParams{Spec: *d, Hash: hash, Paused: pausedAtCreation(d, p.PauseNew),
				Now: now, Deriver: p.Parser})
			if err != nil {
				return err
			}
			if change == store.DagUnchanged {
				// This parser derived the spec's version already: it is derived
				// again only when the DAG changes, comes back or meets another
				// parser (ADR 0040), across restarts and `dags test`s as within
				// a process (synced).
				return nil
			}
			if err := tx.AssetSync(ctx, &store.AssetSyncParams{Spec: d, Now: now}); err != nil { // docs/assets.md
				return err
			}
			return p.syncWarnings(ctx, tx, d, ws, now)
		})
	})
	if err != nil {
		return fmt.Errorf("sync dag %s from %s: %w", d.DagID, d.FileLoc, err)
	}
	p.synced[d.DagID] = hash
	if len(ws) > 0 { // after the commit: once, however often a conflict ran the transaction
		p.logger().Warn("dag warning", "dag_id", d.DagID, "fileloc", d.FileLoc, "warning", strings.Join(ws, "\n"))
	}
	if slices.ContainsFunc(d.Assets, func(a core.Asset) bool { return len(a.Watchers) > 0 }) {
		// Its watchers' triggers may be new: the triggerers claim them now.
		if err := p.Store.Notify(ctx, store.ChannelTrigger); err != nil {
			p.logger().Warn("wake the triggerers", "err", err)
		}
	}
	if change == store.DagNewVersion {
		p.logger().Info("dag version recorded", "dag_id", d.DagID, "fileloc", d.FileLoc, "dag_version_id", version)
	}
	return nil
}

// syncImportErrors makes the store's import errors for our sources match
// errs (filename → message).
func (p *Processor) syncImportErrors(ctx context.Context, errs map[string]string, now time.Time) error {
	existing, err := p.Store.ImportErrorList(ctx, &store.ImportErrorListParams{})
	if err != nil {
		return fmt.Errorf("list import errors: %w", err)
	}
	have := map[string]string{}
	for _, e := range existing {
		have[e.Filename] = e.Message
	}
	var out []error
	for _, name := range sortedKeys(errs) {
		if msg := errs[name]; have[name] != msg {
			p.logger().Warn("dag import error", "file", name, "err", msg)
			if err := p.Store.ImportErrorSet(ctx, name, msg, now); err != nil {
				out = append(out, fmt.Errorf("record import error of %s: %w", name, err))
			}
		}
	}
	for _, name := range sortedKeys(have) {
		if _, still := errs[name]; !still && p.ours(name) {
			if err := p.Store.ImportErrorDelete(ctx, name); err != nil {
				out = append(out, fmt.Errorf("clear import error of %s: %w", name, err))
			}
		}
	}
	return errors.Join(out...)
}

// ours reports whether an import error's filename is one this processor
// manages: a file under Dir, or an Extra DAG's FileLoc.
func (p *Processor) ours(name string) bool {
	if p.Dir != "" {
		if rel, err := filepath.Rel(p.Dir, name); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return slices.ContainsFunc(p.Extra, func(d core.DAG) bool { return extraLoc(&d) == name })
}

func (p *Processor) now() time.Time {
	if p.Clock == nil {
		return core.SystemClock{}.Now()
	}
	return p.Clock.Now()
}

func (p *Processor) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Logger
}

// scan lists the DAG files under Dir, sorted; hidden files and folders
// (names starting with ".") are skipped.
func (p *Processor) scan() ([]string, error) {
	if p.Dir == "" {
		return nil, nil
	}
	var paths []string
	err := filepath.WalkDir(p.Dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		hidden := strings.HasPrefix(e.Name(), ".") && path != p.Dir
		switch {
		case e.IsDir() && hidden:
			return filepath.SkipDir
		case e.IsDir() || hidden:
			return nil
		}
		if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
			paths = append(paths, path)
		}
		return nil
	})
	slices.Sort(paths)
	return paths, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Store is what the DAG processor needs of the store (package store documents each
// method); *sqlstore.Store and every store.Store satisfy it.
type Store interface {
	AssetDeactivateOrphans(ctx context.Context, now time.Time) (int, error)
	AssetSync(ctx context.Context, p *store.AssetSyncParams) error
	DagDeactivateMissing(ctx context.Context, p *store.DagDeactivateParams) error
	DagCount(ctx context.Context, p *store.DagListParams) (int, error)
	DagList(ctx context.Context, p *store.DagListParams) ([]core.DagModel, error)
	DagSync(ctx context.Context, p *store.DagSyncParams) (versionID int64, change store.DagSyncChange, err error)
	DagFileSet(ctx context.Context, f *store.DagFile) error
	DagFileList(ctx context.Context, p *store.DagFileListParams) ([]store.DagFile, error)
	DagFileGet(ctx context.Context, fileloc string) (*store.DagFile, error)
	DagFileDelete(ctx context.Context, fileloc string) error
	ImportErrorDelete(ctx context.Context, filename string) error
	ImportErrorList(ctx context.Context, p *store.ImportErrorListParams) ([]core.ImportError, error)
	ImportErrorSet(ctx context.Context, filename, message string, at time.Time) error
	Notify(ctx context.Context, channel string) error
	WithTx(ctx context.Context, fn func(tx store.Store) error) error
}

// pausedAtCreation is whether d starts paused when first recorded: its
// is_paused_upon_creation, else the deployment's pauseNew.
func pausedAtCreation(d *core.DAG, pauseNew bool) bool {
	if d.IsPausedUponCreation != nil {
		return *d.IsPausedUponCreation
	}
	return pauseNew
}

// retryConflict runs tx, a transaction, up to three times while it fails
// with core.ErrConflict: another process committed the same new rows
// first, which the next run finds.
func retryConflict(tx func() error) error {
	err := tx()
	for attempt := 2; attempt <= 3 && errors.Is(err, core.ErrConflict); attempt++ {
		err = tx()
	}
	return err
}
