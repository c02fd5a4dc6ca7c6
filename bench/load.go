package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// loadResult is what a closed-loop load of some connections measured.
type loadResult struct {
	Conns    int
	Requests int
	Elapsed  time.Duration
	RPS      float64
	P50, P99 time.Duration

	latencies []time.Duration // sorted, for merge
}

// merge combines loads of the same connections run one after another (in slices
// interleaved with another load's, so that both see the same machine): requests over the
// summed time, percentiles over every latency.
func merge(parts ...loadResult) loadResult {
	var res loadResult
	var all [][]time.Duration
	for _, p := range parts {
		res.Conns = p.Conns
		res.Requests += p.Requests
		res.Elapsed += p.Elapsed
		all = append(all, p.latencies)
	}
	return summarize(res, slices.Concat(all...))
}

// summarize sorts latencies into res's percentiles and rate.
func summarize(res loadResult, latencies []time.Duration) loadResult {
	slices.Sort(latencies)
	res.latencies, res.Requests = latencies, len(latencies)
	if res.Elapsed > 0 {
		res.RPS = float64(len(latencies)) / res.Elapsed.Seconds()
	}
	if len(latencies) > 0 {
		res.P50, res.P99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
	}
	return res
}

// runLoad runs do on conns workers, each in a loop (the next request when the last one is
// answered), for dur, and measures every call's latency. The first error stops the load.
func runLoad(ctx context.Context, conns int, dur time.Duration, do func(ctx context.Context, worker int) error) (loadResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline := time.Now().Add(dur)
	latencies := make([][]time.Duration, conns)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	start := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t := time.Now()
				if err := do(ctx, i); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				latencies[i] = append(latencies[i], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return loadResult{}, firstErr
	}
	return summarize(loadResult{Conns: conns, Elapsed: elapsed}, slices.Concat(latencies...)), nil
}

// interleave runs a load of conns connections for dur on each of loads, in rounds slices that
// take turns, so that a machine whose load changes meanwhile weighs on all of them alike.
func interleave(ctx context.Context, conns int, dur time.Duration, rounds int, loads ...func(ctx context.Context, worker int) error) ([]loadResult, error) {
	parts := make([][]loadResult, len(loads))
	for range rounds {
		for i, load := range loads {
			r, err := runLoad(ctx, conns, dur/time.Duration(rounds), load)
			if err != nil {
				return nil, err
			}
			parts[i] = append(parts[i], r)
		}
	}
	results := make([]loadResult, len(loads))
	for i := range parts {
		results[i] = merge(parts[i]...)
	}
	return results, nil
}

// percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// newHTTPClient keeps up to conns connections to one host open, so a load measures requests,
// not connection set-up.
func newHTTPClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = conns, conns, conns
	return &http.Client{Transport: t, Timeout: time.Minute}
}

// call sends one API request with the token and the API's headers, drains the answer and
// fails unless its status is want; it returns the body.
func call(ctx context.Context, c *http.Client, method, url, token, body string, want int) ([]byte, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Service-Version", "2")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d (want %d): %.300s", method, url, resp.StatusCode, want, data)
	}
	return data, nil
}
