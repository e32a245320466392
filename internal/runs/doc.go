// Package runs holds the DAG-run lifecycle operations shared by the API, the
// CLI and the scheduler: triggering a run, clearing task instances and runs,
// marking task instances, building a run's initial task instances, and the
// retry back-off rule (NextRetryAt) used by both the scheduler and the
// Execution API.
//
// Every operation runs in one store transaction and notifies the scheduler
// (store.ChannelScheduler) so it reacts at once.
package runs
