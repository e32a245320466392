package triggerer

// Observer hears of the events triggers commit and of their failed runs,
// by trigger type (the process's metrics).
type Observer interface {
	// TriggerFired counts n events a trigger of type typ committed.
	TriggerFired(typ string, n int)
	// TriggerFailed counts a failed run of a trigger of type typ.
	TriggerFailed(typ string)
}

// fired tells the observer, if any, of n committed events.
func (t *Triggerer) fired(typ string, n int) {
	if t.Observer != nil {
		t.Observer.TriggerFired(typ, n)
	}
}

// failed tells the observer, if any, of a failed trigger run.
func (t *Triggerer) failed(typ string) {
	if t.Observer != nil {
		t.Observer.TriggerFailed(typ)
	}
}
