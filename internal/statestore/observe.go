package statestore

import (
	"context"
	"time"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// Observer hears of every operation a Service's backend carries out: its
// name (get, set, delete, clear), the kind of its scope, how long it took
// and the error it returned (the process's metrics).
type Observer func(op string, kind core.StateKind, took time.Duration, err error)

// Observe makes s report every backend operation to obs and returns s.
// Call it before s is used. Validation errors caught before the backend
// (a bad key, a value over the limit) are not operations.
func (s *Service) Observe(obs Observer) *Service {
	if obs == nil {
		return s
	}
	inner := s.backend
	s.backend = func(st store.StateStore) Backend { return observed{inner: inner(st), obs: obs} }
	return s
}

// observed is a Backend that times and reports each operation of inner.
type observed struct {
	inner Backend
	obs   Observer
}

func (o observed) report(op string, kind core.StateKind, began time.Time, err error) {
	o.obs(op, kind, time.Since(began), err)
}

func (o observed) Get(ctx context.Context, scope core.StateScope, key string) (*core.StateEntry, error) {
	began := time.Now()
	e, err := o.inner.Get(ctx, scope, key)
	o.report("get", scope.Kind, began, err)
	return e, err
}

func (o observed) Set(ctx context.Context, scope core.StateScope, key string, w Write) error {
	began := time.Now()
	err := o.inner.Set(ctx, scope, key, w)
	o.report("set", scope.Kind, began, err)
	return err
}

func (o observed) Delete(ctx context.Context, scope core.StateScope, key string) error {
	began := time.Now()
	err := o.inner.Delete(ctx, scope, key)
	o.report("delete", scope.Kind, began, err)
	return err
}

func (o observed) Clear(ctx context.Context, scope core.StateScope, c Clearing) error {
	began := time.Now()
	err := o.inner.Clear(ctx, scope, c)
	o.report("clear", scope.Kind, began, err)
	return err
}
