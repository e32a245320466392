// Package taskproc keeps a worker's task processes from outliving it, so
// that no task command runs to completion twice after a crash.
//
// Each task runs in a process group of its own, led by its first process.
// One guard per worker process, a tiny shell holding the read end of the
// worker process's lifeline pipe, learns each group as it starts (a line on
// the pipe) and, when the pipe reaches end of file (the worker process
// died, however it died, SIGKILL included), kills every group it knows. The
// task's first process also gets the Linux parent-death signal (SIGKILL),
// forked from one dedicated locked OS thread that never exits, as the
// signal fires when the forking thread ends: it dies with the worker even
// before the guard has read its group, and a shell starts no child that
// soon. One guard per worker rather than per task saves a process start
// per task (a third of a bash task's cost); a guard killed by someone else
// is started again, learning every live group, at the next task.
//
// A Ledger records each running group (its id, its leader's start time and
// the boot) in the worker's journal under its run folder; KillLeftovers,
// called by a starting worker, kills the groups of workers that are no
// longer alive (a guard killed by someone else leaves its tasks behind)
// before the worker claims any work, and leaves the groups of live workers
// alone.
//
// The Ledger also keeps each try's Outcome until its worker has reported
// it: recorded pending before a bash task starts (the task's shell appends
// its exit status to the journal as its last act) and completed when the
// task ends. A worker killed between the end of a command and the server's
// answer to its report leaves the record; its next life reports it
// (Unreported), so that a command that finished is not run again by a
// retry. What remains is the moment between a command's last act and its
// shell's exit-status write, a few instructions of one process.
//
// The journal is a file of JSON lines appended one write a change
// (ledger.go says how a line cut short, compaction and dead workers'
// journals are handled); records an earlier version kept a file each are
// still read (legacy.go).
package taskproc
