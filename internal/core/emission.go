package core

import "time"

// AssetEventReceipt acknowledges an emitted asset event (docs/requirements.md#e-2): the
// event is committed when the receipt is given, whatever happens to its
// emitter later. Duplicate is true when an earlier emission with the same
// idempotency key created the event and this one created nothing.
type AssetEventReceipt struct {
	EventID        int64      `json:"event_id"`
	AssetID        int64      `json:"asset_id"`
	Name           string     `json:"name"`
	URI            string     `json:"uri"`
	PartitionKey   *string    `json:"partition_key"`
	PartitionDate  *time.Time `json:"partition_date,omitempty"`
	IdempotencyKey string     `json:"idempotency_key,omitempty"`
	Timestamp      time.Time  `json:"timestamp"` // the server's, when the event was recorded
	Duplicate      bool       `json:"duplicate"`
}

// Receipt returns the receipt of the event; duplicate says whether this
// emission repeated an earlier one.
func (ev *AssetEvent) Receipt(duplicate bool) *AssetEventReceipt {
	return &AssetEventReceipt{EventID: ev.ID, AssetID: ev.AssetID, Name: ev.Name, URI: ev.URI,
		PartitionKey: ev.PartitionKey, PartitionDate: ev.PartitionDate, IdempotencyKey: ev.IdempotencyKey,
		Timestamp: ev.Timestamp, Duplicate: duplicate}
}
