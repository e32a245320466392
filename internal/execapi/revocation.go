package execapi

import (
	"context"
	"errors"
	"time"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/store"
)

// storeRevocations looks revocations up in the shared database, so a
// revocation recorded through any api-server or the CLI reaches them all.
func storeRevocations(st store.Store) auth.RevocationLookup {
	return func(ctx context.Context, scope, subject string) (time.Time, error) {
		r, err := st.CredentialRevocationGet(ctx, scope, subject)
		if errors.Is(err, core.ErrNotFound) {
			return time.Time{}, nil
		}
		if err != nil {
			return time.Time{}, err
		}
		return r.RevokedBefore, nil
	}
}
