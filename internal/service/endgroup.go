package service

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/weirflow/weir/internal/config"
	"github.com/weirflow/weir/internal/store"
)

// maxEndGroup bounds the try ends one group commit records.
const maxEndGroup = 64

// NearRoundTrip is the longest database round trip at which try ends on
// PostgreSQL share transactions by default: a database on the same
// machine (30-60 µs a ping on loopback here). A group runs its ends'
// statements one after another on one connection, so each end's ~4
// round trips add up: at 100 µs a group still records ~1,800 ends/s; at
// a network's 0.25 ms it would cap an api-server near 900. Beside the
// api-server, a group saves what 16 backends updating the same index
// pages side by side cost the shared cores: +35 % ti/s in a wide run on
// loopback; 2.4 ms away, grouping cost two thirds of it
// (docs/adr/0037-try-ends-share-a-commit-on-a-near-postgresql.md).
const NearRoundTrip = 100 * time.Microsecond

// GroupTryEnds decides Config.GroupTryEnds for an api-server from
// [database] group_try_ends (mode): always, never, or auto — on SQLite,
// whose one writer takes the ends in turn anyway, always; on PostgreSQL
// when roundTrip, measured only then, is at most NearRoundTrip (nil, for
// a process other than an api-server, which records few ends: not). why
// says what decided it, for the log.
func GroupTryEnds(mode, dialect string, roundTrip func() (time.Duration, error)) (group bool, why string) {
	switch {
	case mode == config.GroupTryEndsAlways || mode == config.GroupTryEndsNever:
		return mode == config.GroupTryEndsAlways, "[database] group_try_ends = " + mode
	case dialect == "sqlite":
		return true, "SQLite has one writer"
	case roundTrip == nil:
		return false, "not measured outside an api-server"
	}
	rt, err := roundTrip()
	if err != nil {
		return false, fmt.Sprintf("the database's round trip could not be measured: %v", err)
	}
	if rt <= NearRoundTrip {
		return true, fmt.Sprintf("the database answers in %v, within %v", rt.Round(time.Microsecond), NearRoundTrip)
	}
	return false, fmt.Sprintf("the database answers in %v, beyond %v: each end commits on its own connection", rt.Round(time.Microsecond), NearRoundTrip)
}

// endRequest is one try's end waiting for a group commit: record does its
// changes in the transaction it is given, with ctx (its caller's).
type endRequest struct {
	ctx    context.Context
	record func(tx store.Store) error
	err    error
}

// commitEnd records a try's end (record) in a transaction, or, when many is
// false and ends are not grouped, as record's one statement. With
// Config.GroupTryEnds it shares the transaction of the ends that wait for
// the writer with it (commitEnds).
func (s *Service) commitEnd(ctx context.Context, many bool, record func(tx store.Store) error) error {
	if s.ends == nil {
		return s.inTxIf(ctx, many, record)
	}
	r := &endRequest{ctx: ctx, record: record}
	s.ends.Do(ctx, r)
	return r.err
}

// commitEnds records a group of try ends in one transaction; when one of
// several fails, the group is rolled back and each is recorded in a
// transaction of its own, so that one end's error is never another's. An
// end whose caller gave up while it waited fails alone, before the group.
func (s *Service) commitEnds(ctx context.Context, take func() []*endRequest) {
	var group []*endRequest
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		for _, r := range take() {
			if r.err = r.ctx.Err(); r.err == nil {
				group = append(group, r)
			}
		}
		for _, r := range group {
			if err := r.run(tx); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case group == nil && err != nil: // the transaction did not begin: the queued ends fail with it
		for _, r := range take() {
			if r.err == nil {
				r.err = err
			}
		}
	case err == nil || len(group) == 1:
		for _, r := range group {
			r.err = err
		}
	default:
		for _, r := range group {
			r.err = s.st.WithTx(ctx, r.run)
		}
	}
}

// run records r's end in tx; a panic is its error (the group's other ends
// are then recorded without it).
func (r *endRequest) run(tx store.Store) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("recording a try's end panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return r.record(tx)
}
