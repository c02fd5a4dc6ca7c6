package edge

// failoverBackend tries its backends in order: the next one when a connection to the
// previous fails (or it has no tunnel online).
type failoverBackend struct{ backends []backend }

func (b *failoverBackend) plan(p *planner) []upstream {
	var out []upstream
	for _, child := range b.backends {
		out = append(out, child.plan(p)...)
	}
	return out
}
