package taskproc

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/sysfile"
)

// outcomeExt ends the name of an outcome record.
const outcomeExt = ".outcome"

// Outcome is how a try ended, as its worker recorded it the moment the
// task's command was done, before reporting it to the server. A worker
// killed between the two leaves the record for its next life to report
// (Unreported); otherwise the server, never told, would fail the try at
// its heartbeat timeout and run the command a second time.
//
// A pending outcome (State "") is recorded before a bash task starts: its
// shell writes its exit status to ExitFile as its last act, so that a
// command that exited 0 just before its worker died counts as a success
// even though the worker never learned of it.
type Outcome struct {
	TIID      string `json:"ti_id"`
	TryNumber int    `json:"try_number"`
	State     string `json:"state"`               // "" = pending: see ExitFile
	ExitFile  string `json:"exit_file,omitempty"` // where the task's shell writes its exit status
	// Token is the try's execution token, which the report needs. The
	// record is as private as the worker's token files: 0600 in the
	// worker's 0700 run folder.
	Token string `json:"token"`
	// LogTail is the end of the try's log that no api-server had stored
	// yet, from byte LogOffset of the log on: the next life ships it
	// before it reports the state.
	LogTail   []byte `json:"log_tail,omitempty"`
	LogOffset int64  `json:"log_offset,omitempty"`
	path      string
}

// outcomeRecord is the file kept for one unreported outcome.
type outcomeRecord struct {
	Outcome
	Worker process `json:"worker"` // the worker process that recorded it
}

// ExitFile is where the shell of the given try writes its exit status.
func (l *Ledger) ExitFile(tiID string, try int) string {
	return filepath.Join(l.dir, fmt.Sprintf("%s-%d.exit", filepath.Base(tiID), try))
}

// noStatus is what a pending try's exit file holds until its shell writes
// its exit status over it (a status line is never shorter).
const noStatus = "-\n"

// Record writes o to the ledger's folder, replacing the try's earlier
// record, and returns a function to call once the server has answered its
// report, which retires the record and the exit file. Recording a pending
// outcome also places its exit file, holding noStatus, for the shell to
// write over.
func (l *Ledger) Record(o Outcome) (reported func(), err error) {
	b, err := json.Marshal(outcomeRecord{Outcome: o, Worker: l.owner})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(l.dir, fmt.Sprintf("%s-%d%s", filepath.Base(o.TIID), o.TryNumber, outcomeExt))
	err = l.place(path, b)
	if err == nil && o.State == "" && o.ExitFile != "" {
		err = l.place(o.ExitFile, []byte(noStatus))
	}
	if err != nil {
		return nil, fmt.Errorf("record the outcome of try %d of %s: %w", o.TryNumber, o.TIID, err)
	}
	o.path = path
	return func() { l.Forget(o) }, nil
}

// Unreported returns the outcomes that workers no longer alive recorded in
// the ledger's folder and did not report, oldest first by name; those of
// live workers stay. Call Forget once an outcome's report is answered.
func (l *Ledger) Unreported() ([]Outcome, error) {
	var out []Outcome
	err := readRecords(l.dir, outcomeExt, func(path string, b []byte) error {
		var rec outcomeRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return err
		}
		if rec.Worker.alive() {
			return nil
		}
		rec.path = path
		if rec.State == "" && !exitedZero(rec.ExitFile) {
			l.Forget(rec.Outcome) // the command did not finish, or failed: its retry is right
			return nil
		}
		if rec.State == "" {
			rec.State = string(core.TISuccess)
		}
		out = append(out, rec.Outcome)
		return nil
	})
	return out, err
}

// exitedZero reports whether a shell wrote exit status 0 to path (over
// noStatus).
func exitedZero(path string) bool {
	if path == "" {
		return false
	}
	b, err := sysfile.ReadFile(path)
	return err == nil && strings.TrimSpace(string(b)) == "0"
}

// Forget retires the record of an outcome Unreported returned, and its
// exit file first: a record outliving it is at worst reported again (and
// refused, the try no longer running), while an exit file outliving its
// record would stay forever.
func (l *Ledger) Forget(o Outcome) {
	l.retire(o.ExitFile)
	l.retire(o.path)
}
