package execclient

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weirflow/weir/internal/core"
)

// EmitRequest is the body of POST /execution/task-instances/{id}/asset-events:
// the running try emits an event of Asset (by name or uri), one of its
// task's outlets or, through Alias, any active asset (docs/emission.md).
type EmitRequest struct {
	Asset core.AssetRef `json:"asset"`
	// Alias is an alias outlet of the task the asset is emitted through
	// ("" = the asset is itself an outlet).
	Alias        string  `json:"alias,omitempty"`
	PartitionKey *string `json:"partition_key,omitempty"`
	// PartitionDate is RFC 3339 with a zone offset; it needs PartitionKey.
	PartitionDate string          `json:"partition_date,omitempty"`
	Extra         json.RawMessage `json:"extra,omitempty"` // a JSON object; absent = {}
	// IdempotencyKey makes a repeated emission return the first one's
	// receipt; Emit fills in a fresh key when there is none (nil; set, it
	// may not be empty).
	IdempotencyKey *string `json:"idempotency_key,omitempty"`
}

// NewIdempotencyKey returns a fresh idempotency key, which the SDK and the
// CLI give an emission that names none so that their own retries of the
// request never create a second event: "weir-" and 32 hex digits, the first
// 12 the milliseconds since the epoch and the other 20 random (80 bits).
// Keys made later sort later, so the unique index on them grows at its end
// instead of taking a write on a random page of it for every event (fewer
// pages of WAL an emission, docs/benchmarks.md).
func NewIdempotencyKey() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())) //nolint:gosec // the epoch is past: never negative
	copy(b[:6], b[2:8])                                               // the low 48 bits: good until the year 10889
	_, _ = rand.Read(b[6:])                                           // crypto/rand.Read never fails (Go 1.24+)
	return "weir-" + hex.EncodeToString(b[:])
}

// Emit emits an asset event for the client's try and returns its receipt
// (Duplicate when the idempotency key already named an event). A request
// without an idempotency key gets a fresh one first, so the client's retries
// after a lost answer return the first event. An error matches
// core.ErrForbidden for an asset the task does not declare (or a try that
// is not running), core.ErrInvalid for a bad field, core.ErrTooLarge for
// an oversized extra, core.ErrConflict for a key that names another asset's
// event.
func (c *Client) Emit(ctx context.Context, req EmitRequest) (*core.AssetEventReceipt, error) {
	if c.Identity.TIID == "" {
		return nil, errors.New("emit an asset event: the client has no task instance id (WEIR_TI_ID)")
	}
	if req.IdempotencyKey == nil {
		key := NewIdempotencyKey()
		req.IdempotencyKey = &key
	}
	var rec core.AssetEventReceipt
	if err := c.doJSON(ctx, http.MethodPost, tiPath(c.Identity.TIID, "asset-events"), req, &rec); err != nil {
		return nil, fmt.Errorf("emit an event of asset %s: %w", req.Asset, err)
	}
	return &rec, nil
}
