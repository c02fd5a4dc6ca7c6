package edge

// BreakerState is the state of the circuit breaker of the route routeID in the snapshot in
// force ("" when it has none) and the requests its window counts as finished.
func (e *Edge) BreakerState(routeID string) (state string, finished uint32) {
	for key, b := range e.snap.Load().breakers {
		if key.routeID == routeID {
			c := b.cb.Counts()
			return b.cb.State().String(), c.TotalSuccesses + c.TotalFailures
		}
	}
	return "", 0
}
