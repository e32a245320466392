package sqlstore

// observers are the callbacks a process registers to hear of what its
// store committed (its metrics); shared by a Store and its
// transaction-bound stores.
type observers struct {
	assetEvent func(source string)
}

// ObserveAssetEvents makes the store call fn once for every asset event it
// commits, with the event's source kind (core.AssetSource*): after the
// commit of the transaction that recorded it, never for one rolled back.
// Call it before the store is used.
func (s *Store) ObserveAssetEvents(fn func(source string)) {
	s.obs.assetEvent = fn
}

// noteEvent remembers, in a transaction, an asset event it recorded, for
// ObserveAssetEvents once it commits.
func (s *Store) noteEvent(source string) {
	if s.obs.assetEvent != nil && s.inserted != nil {
		*s.inserted = append(*s.inserted, source)
	}
}

// committed tells the observers of what a committed transaction recorded.
func (o *observers) committed(inserted []string) {
	for _, source := range inserted {
		o.assetEvent(source)
	}
}
