// Package chaos is Weir's fault-injection suite. For each role (standalone,
// api-server, scheduler, worker) it keeps a stream of runs of a mixed DAG
// going and SIGKILLs that role at random moments, restarting it each time;
// it also restarts PostgreSQL mid-run, fills the disk under SQLite and cuts
// a worker off the API server. After each trial it checks what a user
// relies on: every run succeeds, no task instance has two successful
// tries, no task command ran to completion twice, nothing the API reported
// committed is lost, and the database passes its integrity check. It prints
// the figures (trials, faults, runs, task instances, anomalies) at the end.
//
// `make test` runs it with 30 kills per role; `make chaos` runs it longer.
// Flags: -chaos.seed (reproduce a run), -chaos.kills, -chaos.outage and
// -chaos.report (a file for the figures). The package has no code outside
// its tests.
package chaos
