package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/core"
	"github.com/weirflow/weir/internal/service"
	"github.com/weirflow/weir/internal/testutil/clocktest"
	"github.com/weirflow/weir/internal/testutil/sqlitetest"
)

// Variable keys and connection ids are 1 to 250 letters, digits, '_', '-'
// or '.'; anything else is refused with a message naming the key.
func TestVariableKeysAndConnectionIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newSvc(sqlitetest.Open(t), clocktest.New(t0))
	for key, ok := range map[string]bool{
		"a": true, "db.prod-1_X": true, strings.Repeat("k", 250): true,
		"": false, strings.Repeat("k", 251): false, "a b": false, "a\n": false, "é": false, "a/b": false, "a$": false,
	} {
		verr := svc.SaveVariable(ctx, admin, core.Variable{Key: key, Value: "v"}, service.VariableWrite{})
		cerr := svc.SaveConnection(ctx, admin, core.Connection{ID: key, URI: "http://x"}, true)
		for what, err := range map[string]error{"variable": verr, "connection": cerr} {
			switch {
			case ok && err != nil:
				t.Errorf("%s %q: %v, want saved", what, key, err)
			case !ok && (!errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), "250 letters")):
				t.Errorf("%s %q: %v, want ErrInvalid saying what is allowed", what, key, err)
			}
		}
	}
}
