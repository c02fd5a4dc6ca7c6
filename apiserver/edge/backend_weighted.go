package edge

import (
	"fmt"
	"maps"
	"slices"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// weightedBackend sends each visitor to one of its backends, chosen with a probability
// proportional to its weight (a weight of 0 gets nothing).
type weightedBackend struct {
	choices []weightedChoice
	total   int64
}

type weightedChoice struct {
	backend backend
	weight  int64
}

func (c *compiler) weighted(account string, b *api.WeightedBackend, depth int) (backend, error) {
	w := &weightedBackend{}
	for _, id := range slices.Sorted(maps.Keys(b.Backends)) { // a stable order of choices
		weight := b.Backends[id]
		if weight < 0 {
			return nil, fmt.Errorf("backend %s: negative weight %d", id, weight)
		}
		cb, err := c.backend(account, id, depth+1)
		if err != nil {
			return nil, err
		}
		w.choices = append(w.choices, weightedChoice{cb, weight})
		w.total += weight
	}
	return w, nil
}

func (b *weightedBackend) plan(p *planner) []upstream {
	if b.total == 0 {
		return nil
	}
	n := p.rand.Int64N(b.total)
	for _, c := range b.choices {
		if n < c.weight {
			return c.backend.plan(p)
		}
		n -= c.weight
	}
	return nil
}
