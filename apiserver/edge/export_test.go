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

// ServesTCPEdge says whether the snapshot in force has a TCP edge on the reserved address
// addr. Its listener opens as soon as the address is reserved, before the edge is known.
func (e *Edge) ServesTCPEdge(addr string) bool {
	_, ok := e.snap.Load().tcp[addr]
	return ok
}
