package execapi

import "context"

// drainKey keys the drain channel in a request's context.
type drainKey struct{}

// WithDrain returns ctx carrying drain, a channel the api-server closes
// when it begins to shut down: a claim waiting in its long poll then
// answers at once with no work (the worker claims again, from another
// api-server), so a graceful shutdown does not outwait the long polls.
// The api-server sets it as its requests' base context.
func WithDrain(ctx context.Context, drain <-chan struct{}) context.Context {
	return context.WithValue(ctx, drainKey{}, drain)
}

// draining is the drain channel of ctx; nil (never ready) without one.
func draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainKey{}).(<-chan struct{})
	return ch
}
