package taskproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weirflow/weir/internal/core"
)

// Outcome is how a try ended, as its worker recorded it the moment the
// task's command was done, before reporting it to the server. A worker
// killed between the two leaves the record for its next life to report
// (Unreported); otherwise the server, never told, would fail the try at
// its heartbeat timeout and run the command a second time.
//
// A pending outcome (State "") is recorded before a bash task starts: its
// shell appends its exit status to the journal as its last act
// (ExitTrap), so that a command that exited 0 just before its worker died
// counts as a success even though the worker never learned of it.
type Outcome struct {
	TIID      string `json:"ti_id"`
	TryNumber int    `json:"try_number"`
	State     string `json:"state"` // "" = pending: see ExitTo
	// NoRetry, with state failed, is reported with it: the try failed for
	// good (a sensor's timeout).
	NoRetry bool `json:"no_retry,omitempty"`
	// Interrupted, with state failed, is reported with it: the worker
	// stopped the try as it shut down.
	Interrupted bool `json:"interrupted,omitempty"`
	// ExitTo is the journal a pending try's shell appends its exit status
	// to, and ExitID what names the status there: set by Record, ExitID
	// new for each pending record (a try number's resumed run, after a
	// deferral, is not answered by its first run's status).
	ExitTo string `json:"exit_to,omitempty"`
	ExitID string `json:"exit_id,omitempty"`
	// ExitFile is where an earlier version's shell wrote its exit status
	// (legacy.go).
	ExitFile string `json:"exit_file,omitempty"`
	// Token is the try's execution token, which the report needs. The
	// record is as private as the worker's token files: 0600 in the
	// worker's 0700 run folder.
	Token string `json:"token"`
	// LogTail is the end of the try's log that no api-server had stored
	// yet, from byte LogOffset of the log on: the next life ships it
	// before it reports the state.
	LogTail   []byte `json:"log_tail,omitempty"`
	LogOffset int64  `json:"log_offset,omitempty"`

	from   *deadLedger // the dead worker's ledger Unreported found it in
	legacy string      // the record file of an earlier version it was read from
}

// key names the outcome's try in a journal.
func (o Outcome) key() string { return fmt.Sprintf("%s-%d", o.TIID, o.TryNumber) }

// Record records o, replacing the try's earlier outcome, and returns it as
// recorded, for Forget once the server has answered its report. A pending
// outcome is returned with its ExitTo set: ExitTrap then gives the line
// its shell runs first.
func (l *Ledger) Record(o Outcome) (Outcome, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o.ExitTo, o.ExitID = "", ""
	if o.State == "" {
		o.ExitTo = l.path() // in the lock: a compaction cannot move the journal before the record
		l.exitSeq++
		o.ExitID = fmt.Sprintf("%s-%d", l.name, l.exitSeq)
	}
	if err := l.appendLocked(entry{Outcome: &o}); err != nil {
		return o, fmt.Errorf("record the outcome of try %d of %s: %w", o.TryNumber, o.TIID, err)
	}
	return o, nil
}

// ExitTrap is a line of bash, to run before a pending try's command, that
// makes its shell append its exit status to o.ExitTo when it exits,
// whatever ends the command (but SIGKILL), and exit with that status
// whether or not the line could be written (set -e included). A command
// that sets its own EXIT trap or execs another program replaces it: its
// status is then known to the worker alone. "" when o is not pending.
func (o Outcome) ExitTrap() string {
	if o.State != "" || o.ExitTo == "" {
		return ""
	}
	key, _ := json.Marshal(o.ExitID)
	return "__weir_exit_to=" + ShellQuote(o.ExitTo) + "; __weir_exit_key=" + ShellQuote(string(key)) + "; " +
		`trap '__weir_exit=$?; { printf '\''\n{"exit":%s,"status":%d}\n'\'' "$__weir_exit_key" "$__weir_exit" >> "$__weir_exit_to"; } 2>/dev/null || :; exit "$__weir_exit"' EXIT` + "\n"
}

// ExitStatus is the exit status a pending try's shell left in o.ExitTo;
// ok is false while it has left none.
func (o Outcome) ExitStatus() (status int, ok bool) {
	h := newHoldings()
	if o.ExitTo == "" || replay(o.ExitTo, h) != nil {
		return 0, false
	}
	status, ok = h.exits[o.ExitID]
	return status, ok
}

// ShellQuote quotes s as one word for a POSIX shell.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Unreported returns the outcomes that workers no longer alive recorded in
// the ledger's folder and did not report, oldest first; those of live
// workers stay. A pending outcome is a success when its shell exited 0,
// and forgotten otherwise (the command did not finish, or failed: its
// retry is right). Call Forget once an outcome's report is answered.
func (l *Ledger) Unreported() ([]Outcome, error) {
	dead, err := deadLedgers(l.dir)
	var out []Outcome
	for _, d := range dead {
		for _, key := range slices.Sorted(maps.Keys(d.held.outcomes)) {
			o := d.held.outcomes[key]
			o.from = d
			if o.State == "" {
				if status, ok := d.held.exits[o.ExitID]; !ok || status != 0 {
					l.Forget(o)
					continue
				}
				o.State = string(core.TISuccess)
			}
			out = append(out, o)
		}
	}
	legacy, lerr := l.unreportedLegacy()
	return append(out, legacy...), errors.Join(err, lerr)
}

// Forget forgets an outcome Record or Unreported returned, once its
// report was answered.
func (l *Ledger) Forget(o Outcome) {
	switch {
	case o.legacy != "":
		forgetLegacy(o)
	case o.from != nil:
		l.mu.Lock() // one Unreported's outcomes share their dead ledger
		defer l.mu.Unlock()
		o.from.append(entry{Forget: o.key()})
	default:
		_ = l.append(entry{Forget: o.key()})
	}
}
