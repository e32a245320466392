// Package scheduler moves DAG runs and task instances through their state
// machines (docs/state-machines.md): it creates scheduled runs from each
// DAG's timetable, starts queued runs within max_active_runs, decides which
// task instances run by their trigger rules, expands mapped tasks, retries
// failed tries after their back-off, queues runnable instances for workers
// within pool slots and max_active_tasks, finishes runs, and fails or
// retries the tries of workers that stopped heartbeating.
//
// The loop is event-driven: it wakes on store.ChannelScheduler notifications
// (a run was triggered or finished, a DAG changed) for a whole pass, on
// store.ChannelTasks ones (a try ended and left it work: a success queues
// what follows it itself, ADR 0029) for a light pass over the running runs, on a timer for the next due retry or schedule, and on a fallback
// poll. Every state change is conditional on
// the state it expects (compare-and-set), so several schedulers sharing one
// PostgreSQL database never double-create runs or double-queue instances.
//
// Each running run's task instances are kept between passes and read
// incrementally (runview.go), so a pass costs what changed rather than the
// run's size; the kept view only ever delays a decision, never corrupts one.
package scheduler
