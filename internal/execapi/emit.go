package execapi

import (
	"net/http"

	"github.com/weirflow/weir/internal/core"

	"github.com/weirflow/weir/internal/auth"
	"github.com/weirflow/weir/internal/emission"
	"github.com/weirflow/weir/internal/execclient"
)

// assetEventEmit serves POST /execution/task-instances/{id}/asset-events:
// the running try emits an asset event (service.EmitFromTry holds the
// rules). 201 with the receipt; 200 with the first event's receipt when the
// idempotency key repeats an emission; 400, 403, 404, 409 or 413 with
// nothing created.
func (s *server) assetEventEmit(w http.ResponseWriter, r *http.Request, c *auth.Claims) error {
	var req execclient.EmitRequest
	if err := readJSON(w, r, smallBody, &req); err != nil {
		return err
	}
	ti, err := s.runningTI(r, c)
	if err != nil {
		return err
	}
	rec, err := s.svc.EmitFromTry(r.Context(), ti, emission.Request{Asset: req.Asset, Alias: req.Alias,
		PartitionKey: req.PartitionKey, PartitionDate: req.PartitionDate, Extra: req.Extra,
		IdempotencyKey: req.IdempotencyKey})
	if err != nil {
		return err
	}
	writeReceipt(w, rec)
	return nil
}

// writeReceipt answers an emission: 201 with the receipt of a new event,
// 200 with the first receipt for a repeated idempotency key.
func writeReceipt(w http.ResponseWriter, rec *core.AssetEventReceipt) {
	status := http.StatusCreated
	if rec.Duplicate {
		status = http.StatusOK
	}
	writeJSON(w, status, rec)
}
