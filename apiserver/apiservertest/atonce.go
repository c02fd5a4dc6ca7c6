package apiservertest

import "sync"

// AtOnce calls fn(0) … fn(n-1), each in its own goroutine, released together so that they
// race as hard as the scheduler allows, and returns when all have returned.
func AtOnce(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}
