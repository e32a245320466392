package taskcli

import (
	"errors"
	"net/http"
	"testing"

	"github.com/weirflow/weir/internal/execclient"
)

// A refusal of the request as bad input exits 2; an api-server older than
// this CLI refuses it with 400 too, but the input was fine: the API
// refused it, exit 3.
func TestRefusalExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason string
		code   int
	}{{"invalid_request", exitInvalid}, {execclient.ReasonUnsupportedVersion, exitFailed}} {
		err := taskStateError("set k", &execclient.Error{Status: http.StatusBadRequest, Problem: execclient.Problem{Reason: tc.reason, Detail: "no"}})
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != tc.code {
			t.Errorf("400 %s: %v, want exit %d", tc.reason, err, tc.code)
		}
	}
}
