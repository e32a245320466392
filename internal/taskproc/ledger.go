package taskproc

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// A Ledger keeps its records in a journal, a file of JSON lines, one per
// change (a task group started or ended, a try's outcome recorded or
// forgotten), each appended with one write, and the lines the tries'
// shells append as they exit (Outcome.ExitTrap). Replaying a journal
// from its first line gives what it holds. An append is one system call
// where a file per record took seven, on inodes ext4 has to journal
// (docs/performance-history.md, twenty-fifth round).
//
// A line is written whole or, its writer killed inside the write, cut
// short. Every line starts with a line break, so a cut line ends where
// the next begins; a line that does not parse is skipped, and what it
// would have changed did not happen.
//
// A journal grown past compactAt bytes is compacted: what it holds is
// written to the next generation, <pid>-<start>-<n>.<generation>.journal,
// which takes the appends from then on. An older generation is removed
// once no pending try's shell may still append its exit status to it.
// Replaying every generation of a ledger in order gives what it holds.

// journalExt ends the name of a journal.
const journalExt = ".journal"

// compactAt is the size past which a journal is compacted: a few thousand
// tries' records (a try appends about 2 KiB, its token twice included).
const compactAt = 4 << 20

// ledgers numbers the ledgers of this process, so that two never share a
// journal.
var ledgers atomic.Int64

// entry is one line of a journal: one of its fields is set.
type entry struct {
	Owner   *process `json:"owner,omitempty"`   // the journal's first line: whose ledger it is
	Group   *process `json:"group,omitempty"`   // a task group started, led by this process
	Ended   string   `json:"ended,omitempty"`   // a group ended (its key)
	Outcome *Outcome `json:"outcome,omitempty"` // a try's outcome, recorded or replaced
	Forget  string   `json:"forget,omitempty"`  // an outcome reported (its key)
	Exit    string   `json:"exit,omitempty"`    // a pending try's shell exited (its outcome's ExitID)
	Status  int      `json:"status,omitempty"`  // with this status
}

// holdings is what a ledger's journal holds: its replay.
type holdings struct {
	owner    *process
	groups   map[string]process // by groupKey
	outcomes map[string]Outcome // by Outcome.key
	exits    map[string]int     // the exit statuses shells appended, by Outcome.ExitID
}

func newHoldings() *holdings {
	return &holdings{groups: map[string]process{}, outcomes: map[string]Outcome{}, exits: map[string]int{}}
}

func (h *holdings) apply(e entry) {
	switch {
	case e.Owner != nil:
		h.owner = e.Owner
	case e.Group != nil:
		h.groups[groupKey(*e.Group)] = *e.Group
	case e.Ended != "":
		delete(h.groups, e.Ended)
	case e.Outcome != nil:
		h.outcomes[e.Outcome.key()] = *e.Outcome
	case e.Forget != "":
		delete(h.outcomes, e.Forget)
	case e.Exit != "":
		h.exits[e.Exit] = e.Status
	}
}

// empty reports whether nothing held needs the journal any more.
func (h *holdings) empty() bool { return len(h.groups) == 0 && len(h.outcomes) == 0 }

// groupKey names a task group in a journal: its leader's pid and start.
func groupKey(p process) string { return fmt.Sprintf("%d-%d", p.PID, p.Start) }

// Ledger records a worker's running task groups and its tries' outcomes
// in a journal in a folder ($WEIR_HOME/run/task-groups), so that the
// worker's next life can kill the groups still running (KillLeftovers)
// and report the outcomes it did not (Unreported).
type Ledger struct {
	dir   string
	owner process
	name  string // <pid>-<start>-<n>: its journals' names begin with it

	mu        sync.Mutex
	fd        int   // the current generation's journal, appended to (-1: closed)
	gen       int   // its generation
	size      int64 // its size
	held      *holdings
	older     []int // earlier generations not yet removed
	compactAt int64
	exitSeq   int64             // the last pending outcome's ExitID number
	crashAt   func(step string) // called after each append by crash tests; nil otherwise
}

// OpenLedger opens a new journal for this process in dir (creating dir
// 0700) and removes the spare files earlier versions' dead workers left.
func OpenLedger(dir string) (*Ledger, error) {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil { //nolint:gosec // G703: the worker's own run folder, from its configuration
		return nil, fmt.Errorf("create task group folder: %w", err)
	}
	owner, err := identify(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("identify the worker process: %w", err)
	}
	l := &Ledger{dir: dir, owner: owner, name: fmt.Sprintf("%d-%d-%d", owner.PID, owner.Start, ledgers.Add(1)),
		fd: -1, held: newHoldings(), compactAt: compactAt}
	if err := removeDeadSpares(dir); err != nil {
		return nil, err
	}
	if err := l.startGeneration(0); err != nil {
		return nil, err
	}
	return l, nil
}

// journalPath is the path of generation gen of the journal named name.
func journalPath(dir, name string, gen int) string {
	return filepath.Join(dir, name+"."+strconv.Itoa(gen)+journalExt)
}

// startGeneration creates generation gen of l's journal, holding its
// owner and what l holds, and makes it the one appended to; l.mu is held
// (or l is not shared yet).
func (l *Ledger) startGeneration(gen int) error {
	path := journalPath(l.dir, l.name, gen)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create task journal: %w", err)
	}
	lines := []entry{{Owner: &l.owner}}
	for _, g := range l.held.groups {
		lines = append(lines, entry{Group: &g})
	}
	for _, o := range l.held.outcomes {
		lines = append(lines, entry{Outcome: &o})
	}
	b, err := encodeLines(lines...)
	if err == nil {
		_, err = unix.Write(fd, b)
	}
	if err != nil {
		_ = unix.Close(fd)
		_ = os.Remove(path) //nolint:gosec // G703: the ledger's own journal
		return fmt.Errorf("write task journal: %w", err)
	}
	if l.fd >= 0 {
		_ = unix.Close(l.fd)
		l.older = append(l.older, l.gen)
	}
	l.fd, l.gen, l.size = fd, gen, int64(len(b))
	return nil
}

// append writes e to l's journal and applies it to what l holds,
// compacting the journal when it has grown past l.compactAt.
func (l *Ledger) append(e entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appendLocked(e)
}

// appendLocked is append with l.mu held.
func (l *Ledger) appendLocked(e entry) error {
	if l.fd < 0 {
		return errors.New("append to task journal: the ledger is closed")
	}
	b, err := encodeLines(e)
	if err != nil {
		return err
	}
	n, err := unix.Write(l.fd, b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite // the line is cut short: as if never written
	}
	if err != nil {
		return fmt.Errorf("append to task journal: %w", err)
	}
	l.step("appended")
	l.held.apply(e)
	l.size += int64(len(b))
	// A compaction that fails (a full disk) leaves the journal as it was,
	// longer: the next append tries again.
	if l.size > l.compactAt && l.startGeneration(l.gen+1) == nil {
		l.step("compacted")
	}
	l.removeOlder()
	return nil
}

// removeOlder removes the earlier generations, oldest first, up to the
// first one a pending try's shell may still append to: a replay reads the
// generations left in order from a snapshot on (the first line of each),
// so a generation is never removed while an older one stays. l.mu is
// held.
func (l *Ledger) removeOlder() {
	for len(l.older) > 0 {
		path := journalPath(l.dir, l.name, l.older[0])
		for _, o := range l.held.outcomes {
			if o.State == "" && o.ExitTo == path {
				return
			}
		}
		_ = os.Remove(path) //nolint:gosec // G703: the ledger's own journal
		l.older = l.older[1:]
		l.step("removed")
	}
}

// Close closes l's journal and removes it when it holds nothing (no
// running group, no unreported outcome): a worker stopped cleanly leaves
// no journal; one holding records stays for the worker's next life.
func (l *Ledger) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fd < 0 {
		return
	}
	_ = unix.Close(l.fd)
	l.fd = -1
	if !l.held.empty() {
		return
	}
	for _, gen := range append(l.older, l.gen) {
		_ = os.Remove(journalPath(l.dir, l.name, gen)) //nolint:gosec // G703: the ledger's own journal
	}
	l.older = nil
}

// path is the journal appended to now; l.mu is held.
func (l *Ledger) path() string { return journalPath(l.dir, l.name, l.gen) }

// step marks the end of a step, where a crash test kills the process
// (Ledger.crashAt).
func (l *Ledger) step(name string) {
	if l.crashAt != nil {
		l.crashAt(name)
	}
}

// add records the group led by pgid, a child of this process not yet
// waited for (it may have exited), and returns it.
func (l *Ledger) add(pgid int) (process, error) {
	g, err := identifyChild(pgid)
	if err != nil {
		return process{}, fmt.Errorf("identify task process group %d: %w", pgid, err)
	}
	if err := l.append(entry{Group: &g}); err != nil {
		return process{}, fmt.Errorf("record task process group: %w", err)
	}
	return g, nil
}

// remove forgets a finished group.
func (l *Ledger) remove(g process) { _ = l.append(entry{Ended: groupKey(g)}) }

// Leftover is a task process group of a dead worker that KillLeftovers
// killed.
type Leftover struct {
	PGID      int   // the group's id
	WorkerPID int   // the pid of the worker that started it
	Killed    []int // the processes still running in it
}

// KillLeftovers kills the recorded task groups of workers no longer alive
// that still run, and ends their records; records of live workers (a
// sibling sharing the folder) stay. A group is killed only while it is the
// recorded one: its leader still runs with the recorded start time, or, the
// leader gone, members started after it keep its id (a group id is not
// reused while any member lives).
func KillLeftovers(dir string) ([]Leftover, error) {
	var out []Leftover
	kill := func(g, worker process) {
		if pids := killGroup(g); len(pids) > 0 {
			out = append(out, Leftover{PGID: g.PID, WorkerPID: worker.PID, Killed: pids})
		}
	}
	dead, err := deadLedgers(dir)
	for _, d := range dead {
		for key, g := range d.held.groups {
			kill(g, *d.held.owner)
			d.append(entry{Ended: key})
		}
	}
	return out, errors.Join(err, killLegacyLeftovers(dir, kill))
}

// killGroup SIGKILLs the recorded group g if it still runs and returns the
// processes it found in it.
func killGroup(g process) []int {
	if g.PID <= 1 {
		return nil // names no task's group (kill would take 0 for this process's own)
	}
	if boot, err := bootID(); err != nil || boot != g.Boot {
		return nil // rebooted since: nothing of that life runs
	}
	if !g.alive() {
		if _, _, err := procStat(g.PID); err == nil {
			return nil // the pid now belongs to another process: the group emptied once
		}
	}
	pids := groupMembers(g.PID, g.Start)
	if len(pids) > 0 {
		_ = signalGroup(g.PID, syscall.SIGKILL)
	}
	return pids
}

// Recorded returns the outcomes the journals in dir hold, every worker's
// (live or dead), sorted by try.
func Recorded(dir string) ([]Outcome, error) {
	ledgers, err := journalsIn(dir)
	if err != nil {
		return nil, err
	}
	h := newHoldings()
	for _, d := range ledgers {
		if err := d.replay(h); err != nil {
			return nil, err
		}
	}
	var out []Outcome
	for _, key := range slices.Sorted(maps.Keys(h.outcomes)) {
		out = append(out, h.outcomes[key])
	}
	return out, nil
}

// deadLedger is a ledger's journal as its files hold it: a worker's no
// longer alive (deadLedgers), whose held its replay fills; journalsIn
// lists every ledger's this way, a live one's included (Recorded).
type deadLedger struct {
	dir, name string
	gens      []int // its generations, in order
	held      *holdings
}

// journalsIn lists the ledgers whose journals are in dir, by name, each
// with its generations in order.
func journalsIn(dir string) ([]*deadLedger, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read task group folder: %w", err)
	}
	byName := map[string]*deadLedger{}
	for _, e := range entries {
		name, genText, ok := strings.Cut(strings.TrimSuffix(e.Name(), journalExt), ".")
		gen, err := strconv.Atoi(genText)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), journalExt) {
			continue
		}
		if byName[name] == nil {
			byName[name] = &deadLedger{dir: dir, name: name, held: newHoldings()}
		}
		byName[name].gens = append(byName[name].gens, gen)
	}
	var out []*deadLedger
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		slices.Sort(byName[name].gens)
		out = append(out, byName[name])
	}
	return out, nil
}

// replay applies the ledger's generations, in order, to h.
func (d *deadLedger) replay(h *holdings) error {
	var errs []error
	for _, gen := range d.gens {
		if err := replay(journalPath(d.dir, d.name, gen), h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deadLedgers replays the journals in dir whose owners are no longer
// alive, removing those that hold nothing.
func deadLedgers(dir string) ([]*deadLedger, error) {
	all, err := journalsIn(dir)
	var out []*deadLedger
	errs := []error{err}
	for _, d := range all {
		if ownerAlive(d.name) {
			continue
		}
		if err := d.replay(d.held); err != nil {
			errs = append(errs, err)
			continue // unread: kept for a later start
		}
		if d.held.empty() {
			d.remove()
			continue
		}
		if d.held.owner == nil {
			d.held.owner = &process{}
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

// append adds e to the dead ledger's last generation (without creating
// it: a sibling may have removed it, having forgotten everything) and to
// what it holds, and removes the journal once it holds nothing.
func (d *deadLedger) append(e entry) {
	d.held.apply(e)
	if d.held.empty() {
		d.remove()
		return
	}
	b, err := encodeLines(e)
	if err != nil {
		return
	}
	f, err := os.OpenFile(journalPath(d.dir, d.name, d.gens[len(d.gens)-1]), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	_, _ = f.Write(b)
	_ = f.Close()
}

// remove removes every generation of the dead ledger's journal.
func (d *deadLedger) remove() {
	for _, gen := range d.gens {
		_ = os.Remove(journalPath(d.dir, d.name, gen)) //nolint:gosec // G703: a journal of the worker's own run folder
	}
}
