// Package storetest is the one conformance suite every store.Store
// implementation runs: each engine's tests call Run with a constructor that
// returns a fresh, migrated store. It checks the behaviour callers rely on:
// conditional state changes, conflicts, claim exclusivity under concurrency,
// retries and history, mapped-task expansion, XCom values, notifications and
// transactions, the auth and admin records, and how every list pages,
// orders and counts in the database.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Run runs the whole suite. newStore must return a fresh, migrated store
// whose data no other test sees, and close it when t ends.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f *fixture)
	}{
		{"DagSyncVersions", testDagSyncVersions},
		{"DagListPauseNextRun", testDagListPauseNextRun},
		{"DagDeactivateMissing", testDagDeactivateMissing},
		{"DagListSearchTag", testDagListSearchTag},
		{"DagRunRecent", testDagRunRecent},
		{"TaskInstanceStateCounts", testTaskInstanceStateCounts},
		{"AssetLastEventTimes", testAssetLastEventTimes},
		{"AssetLinks", testAssetLinks},
		{"AssetQueueFindClear", testAssetQueueFindClear},
		{"ImportErrors", testImportErrors},
		{"DagWarnings", testDagWarnings},
		{"DagFiles", testDagFiles},
		{"DagRunCreateGet", testDagRunCreateGet},
		{"DagRunGetWithTasksInTx", testDagRunGetWithTasksInTx},
		{"DagRunDuplicateConflict", testDagRunDuplicateConflict},
		{"DagRunSetState", testDagRunSetState},
		{"DagRunListRanges", testDagRunListRanges},
		{"DagRunDelete", testDagRunDelete},
		{"TaskInstanceListFilters", testTaskInstanceListFilters},
		{"DagRunListLatestCount", testDagRunListLatestCount},
		{"DagRunPreviousSuccess", testDagRunPreviousSuccess},
		{"DagRunTests", testDagRunTests},
		{"Backfills", testBackfills},
		{"DagDelete", testDagDelete},
		{"DagInfo", testDagInfo},
		{"TaskInstanceGetList", testTaskInstanceGetList},
		{"TaskInstanceSetState", testTaskInstanceSetState},
		{"TaskInstanceExpand", testTaskInstanceExpand},
		{"TaskInstanceNewTry", testTaskInstanceNewTry},
		{"TaskInstanceUpdatedSince", testTaskInstanceUpdatedSince},
		{"ClaimOrderAndQueues", testClaimOrderAndQueues},
		{"ClaimExclusiveConcurrent", testClaimExclusiveConcurrent},
		{"ClaimReclaim", testClaimReclaim},
		{"ClaimReclaimStarted", testClaimReclaimStarted},
		{"ClaimStarts", testClaimStarts},
		{"ClaimRuns", testClaimRuns},
		{"ClaimsConfinedToARun", testClaimsConfinedToARun},
		{"ClaimsLeaveTestRuns", testClaimsLeaveTestRuns},
		{"DagRunEndTest", testDagRunEndTest},
		{"StartHeartbeatFinish", testStartHeartbeatFinish},
		{"FinishLater", testFinishLater},
		{"Stale", testStale},
		{"FailedOverTry", testFailedOverTry},
		{"FailoverSeesTheHeartbeat", testFailoverSeesTheHeartbeat},
		{"RefundedTry", testRefundedTry},
		{"ActiveCounts", testActiveCounts},
		{"DeferResume", testDeferResume},
		{"DeferTimeoutFailAndNewTry", testDeferTimeoutFailAndNewTry},
		{"ResumeByMethodAndFromNone", testResumeByMethodAndFromNone},
		{"TriggerClaimHoldFailover", testTriggerClaimHoldFailover},
		{"TriggerClaimExclusiveConcurrent", testTriggerClaimExclusiveConcurrent},
		{"StreamAppendBackpressure", testStreamAppendBackpressure},
		{"StreamTriggerClose", testStreamTriggerClose},
		{"StreamCleanup", testStreamCleanup},
		{"RunEndClosesStreams", testRunEndClosesStreams},
		{"TaskInstanceIterate", testTaskInstanceIterate},
		{"TriggerRetireProducer", testTriggerRetireProducer},
		{"XComRoundTrip", testXComRoundTrip},
		{"XComUpsertListClear", testXComUpsertListClear},
		{"StateRoundTrip", testStateRoundTrip},
		{"StateDeleteClearPage", testStateDeleteClearPage},
		{"TaskStateFiltersMapIndices", testTaskStateFiltersMapIndices},
		{"TaskStateClearOnSuccess", testTaskStateClearOnSuccess},
		{"TaskStateExpiry", testTaskStateExpiry},
		{"StateTry", testStateTry},
		{"StateObjects", testStateObjects},
		{"AssetStateNoRetentionListAll", testAssetStateNoRetentionListAll},
		{"AssetStateClearKeepsWatchers", testAssetStateClearKeepsWatchers},
		{"AssetStateOrphansCascade", testAssetStateOrphansCascade},
		{"TxCommitRollback", testTxCommitRollback},
		{"RoundTrip", testRoundTrip},
		{"NotifySubscribe", testNotifySubscribe},
		{"NotifyAfterCommitOnly", testNotifyAfterCommitOnly},
		{"UsersTokens", testUsersTokens},
		{"UserCountLock", testUserCountLock},
		{"CredentialRevocation", testCredentialRevocation},
		{"SessionEnd", testSessionEnd},
		{"TaskInstanceTotals", testTaskInstanceTotals},
		{"Connections", testConnections},
		{"ConnectionsAtRest", testConnectionsAtRest},
		{"Variables", testVariables},
		{"Pools", testPools},
		{"ListSearch", testListSearch},
		{"JobsAudit", testJobsAudit},
		{"WorkerHeartbeat", testWorkerHeartbeat},
		{"JobPrune", testJobPrune},
		{"WorkerLastBeat", testWorkerLastBeat},
		{"JobDeleteOfProcess", testJobDeleteOfProcess},
		{"TaskLog", testTaskLog},
		{"TaskLogDeferredTail", testTaskLogDeferredTail},
		{"TaskLogPruneWalk", testTaskLogPruneWalk},
		{"TaskLogPruneKeepsLiveTries", testTaskLogPruneKeepsLiveTries},
		{"StoppedTryLog", testStoppedTryLog},
		{"ClearedTryLog", testClearedTryLog},
		{"TaskLogRecord", testTaskLogRecord},
		{"AssetSync", testAssetSync},
		{"AssetEventsQueue", testAssetEventsQueue},
		{"AssetOutletEventsWithSuccess", testAssetOutletEventsWithSuccess},
		{"AssetEventEmissionFields", testAssetEventEmissionFields},
		{"AssetEventConcurrentInserts", testAssetEventConcurrentInserts},
		{"AssetEventBurstQueued", testAssetEventBurstQueued},
		{"AssetEventInsertWakesScheduler", testAssetEventInsertWakesScheduler},
		{"AssetEventObserved", testAssetEventObserved},
		{"AssetConditionSchedule", testAssetConditionSchedule},
		{"AssetPartitionRuns", testAssetPartitionRuns},
		{"AssetAliasAssociate", testAssetAliasAssociate},
		{"AssetAliasEventsWithSuccess", testAssetAliasEventsWithSuccess},
		{"AssetAliasDeadTryRetried", testAssetAliasDeadTryRetried},
		{"AssetAliasSchedule", testAssetAliasSchedule},
		{"AssetAliasListGet", testAssetAliasListGet},
		{"WatcherSync", testWatcherSync},
		{"WatcherStopsWithDag", testWatcherStopsWithDag},
		{"WatcherCommit", testWatcherCommit},
		{"CallbackQueue", testCallbackQueue},
		{"CallbackWithStateChange", testCallbackWithStateChange},
		{"PagingEveryOrder", testPagingEveryOrder},
		{"PagingOrderValues", testPagingOrderValues},
		{"PagingFiltersCount", testPagingFiltersCount},
		{"PagingKeyset", testPagingKeyset},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, &fixture{t: t, ctx: t.Context(), st: newStore(t), now: baseTime})
		})
	}
}

// baseTime is the suite's "now": microsecond precision, as stored.
var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)

// fixture bundles what a test needs and builds common rows.
type fixture struct {
	t   *testing.T
	ctx context.Context
	st  store.Store
	now time.Time
}

// at returns now plus d.
func (f *fixture) at(d time.Duration) time.Time { return f.now.Add(d) }

// dag makes sure a DAG exists and returns its latest version id.
func (f *fixture) dag(dagID string) int64 {
	f.t.Helper()
	id, _, err := f.st.DagSync(f.ctx, &store.DagSyncParams{
		Spec: core.DAG{DagID: dagID, Tasks: []core.Task{{TaskID: "t", Operator: "noop"}}},
		Hash: "h-" + dagID, Now: f.now})
	if err != nil {
		f.t.Fatalf("sync dag %s: %v", dagID, err)
	}
	return id
}

// run creates a run (and its DAG) with the given task instances.
func (f *fixture) run(dagID, runID string, tis ...store.NewTaskInstance) *core.DagRun {
	f.t.Helper()
	version := f.dag(dagID)
	r, err := f.st.DagRunCreate(f.ctx, &store.DagRunCreateParams{DagID: dagID, RunID: runID,
		RunType: core.RunManual, State: core.RunQueued, DagVersionID: version, Now: f.now, TaskInstances: tis})
	if err != nil {
		f.t.Fatalf("create run %s/%s: %v", dagID, runID, err)
	}
	return r
}

// get returns a task instance or fails the test.
func (f *fixture) get(id string) *core.TaskInstance {
	f.t.Helper()
	ti, err := f.st.TaskInstanceGet(f.ctx, id)
	if err != nil {
		f.t.Fatalf("get task instance %s: %v", id, err)
	}
	return ti
}

// newTI describes an unmapped task instance in a state.
func newTI(taskID string, state core.TIState) store.NewTaskInstance {
	return store.NewTaskInstance{ID: uuid.NewString(), TaskID: taskID, MapIndex: core.NoMapIndex,
		MaxTries: 1, Operator: "noop", State: state}
}

// wantErr fails unless err wraps target.
func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// must fails on a non-nil error.
func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
