package apiservertest

import (
	"sync"
	"time"
)

// Clock is a test's clock for Options.Now (the API's or the edge's), moved on by hand.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock that reads now until it is moved.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
