package store

// Page selects one window of a list, in the database: at most Limit rows
// after skipping Offset, in the order OrderBy names. Every list method takes
// its filters and a Page; a sibling Count method with the same filters gives
// the total (the REST API's total_entries).
type Page struct {
	Limit  int // 0 = no limit (internal callers only; the REST API always sets one)
	Offset int
	// OrderBy is one of the fields the list documents, "-" first for
	// descending; "" = the list's default order. Every order ends with a
	// unique key, so pages are stable. An unknown field wraps core.ErrInvalid.
	OrderBy string
}
