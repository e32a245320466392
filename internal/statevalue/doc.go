// Package statevalue holds the rules of a state-store entry that every side
// applies, with no storage behind them: what a key may be, which JSON
// values are storable and how they are normalized, and a task-state key's
// retention. The api-server (package statestore) enforces them on every
// write; the worker, the in-task CLI and the worker-side object-store
// backend (package stateref) check input with them before it is sent, so
// that none of those needs to import a store (docs/task-state.md,
// docs/asset-state.md).
package statevalue
