package service

import (
	"context"
	"runtime"

	"github.com/weirflow/weir/internal/store"
)

// maxEndGroup bounds the try ends one group commit records.
const maxEndGroup = 64

// endRequest is one try's end waiting for a group commit: record does its
// changes in the transaction it is given.
type endRequest struct {
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
	r := &endRequest{record: record}
	s.ends.Do(ctx, r)
	return r.err
}

// commitEnds records a group of try ends in one transaction; when one of
// several fails, the group is rolled back and each is recorded in a
// transaction of its own, so that one end's error is never another's.
func (s *Service) commitEnds(ctx context.Context, take func() []*endRequest) {
	var group []*endRequest
	err := s.st.WithTx(ctx, func(tx store.Store) error {
		runtime.Gosched() // bounded: one turn of the ready goroutines, never a timer
		group = take()
		for _, r := range group {
			if err := r.record(tx); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case group == nil: // the transaction did not begin: the queued ends fail with it
		for _, r := range take() {
			r.err = err
		}
	case err == nil || len(group) == 1:
		for _, r := range group {
			r.err = err
		}
	default:
		for _, r := range group {
			r.err = s.st.WithTx(ctx, r.record)
		}
	}
}
