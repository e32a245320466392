// Package core holds Weir's domain types: DAG specifications, DAG runs, task
// instances, their state machines and trigger rules, and the sentinel errors
// shared by every layer. It performs no I/O and imports nothing of Weir's.
package core
