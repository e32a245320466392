package operator

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weirflow/weir/internal/core"
)

// AliasOutlets lets a try add concrete assets to the aliases its task
// declares as outlets (an execclient.Client satisfies it). An addition becomes
// an asset event when the try succeeds (docs/assets.md#aliases).
type AliasOutlets interface {
	AddToAlias(ctx context.Context, alias string, asset core.AssetRef, extra json.RawMessage) error
}

// errNoAliasOutlets is returned when a try runs without an Execution API
// client.
var errNoAliasOutlets = errors.New("add to alias: no Execution API client")

// AliasOutlets returns the try's access to its alias outlets (the worker's
// XCom client is the try's Execution API client); calls fail with an error
// when the try has no Execution API client.
func (tc TaskContext) AliasOutlets() AliasOutlets {
	return tryClient[AliasOutlets](tc, noAliasOutlets{})
}

// noAliasOutlets answers every call with errNoAliasOutlets.
type noAliasOutlets struct{}

func (noAliasOutlets) AddToAlias(context.Context, string, core.AssetRef, json.RawMessage) error {
	return errNoAliasOutlets
}
