// Package e2e holds Weir's end-to-end tests. They build the weir binary once
// per test run and drive it as a user would: standalone on SQLite, separate
// roles on PostgreSQL, the REST API over real HTTP and the CLI as a
// subprocess. The package has no code outside its tests.
package e2e
