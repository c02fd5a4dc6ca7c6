package postgres

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

// TestRateBucketsTake: the statement's arithmetic (a new bucket is full, a take never
// exceeds the whole tokens held, it refills evenly up to its size, a clock that goes back
// gains nothing), and takes from two pools at once never hand out more than the bucket holds.
func TestRateBucketsTake(t *testing.T) {
	ctx := context.Background()
	dsn := freshDatabase(t)
	var stores []*Store
	for range 2 {
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	b := store.Bucket{Size: 3, Per: time.Minute}
	now := time.Unix(1_700_000_000, 0)
	for _, step := range []struct {
		store      int
		want       int
		at         time.Duration
		taken      int
		left       float64
		reasonText string
	}{
		{0, 2, 0, 2, 1, "a new bucket is full"},
		{1, 5, 0, 1, 0, "the other replica sees the same bucket"},
		{0, 1, 10 * time.Second, 0, 0.5, "half a token regained"},
		{1, 1, 5 * time.Second, 0, 0.5, "a clock behind gains nothing"},
		{0, 1, 20 * time.Second, 1, 0, "a whole token regained"},
		{1, 3, 10 * time.Minute, 3, 0, "full again, never more than its size"},
	} {
		taken, left, err := stores[step.store].RateBuckets().Take(ctx, "k", step.want, b, now.Add(step.at))
		if err != nil || taken != step.taken || left != step.left {
			t.Fatalf("%s: took %d, left %v, %v; want %d and %v", step.reasonText, taken, left, err, step.taken, step.left)
		}
	}

	const size = 40
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			taken, _, err := stores[i%2].RateBuckets().Take(ctx, "shared", 1, store.Bucket{Size: size, Per: time.Hour}, now)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += taken
			mu.Unlock()
		})
	}
	wg.Wait()
	if total != size {
		t.Fatalf("concurrent takes got %d tokens of a bucket of %d", total, size)
	}
}

// TestReplicasShareRateLimit runs two servers on one PostgreSQL database: requests through
// both together are held to the account's one allowance, exactly at the spec's 120 per
// minute (a lease of one token) and with leases of several tokens.
func TestReplicasShareRateLimit(t *testing.T) {
	for _, limit := range []int{120, 1000} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			urls, token := replicas(t, limit)
			get := func(base string) *http.Response {
				req, _ := http.NewRequest("GET", base+"/api_keys", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Service-Version", "2")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			if limit == 120 { // one token at a time: each replica sees the other's takes
				for i, want := range []string{"119", "118", "117"} {
					if got := get(urls[i%2]).Header.Get("X-RateLimit-Remaining"); got != want {
						t.Fatalf("request %d: X-RateLimit-Remaining %s, want %s", i, got, want)
					}
				}
			}
			admitted := 0
			if limit == 120 {
				admitted = 3
			}
			refusedBoth := 0
			for i := 0; refusedBoth < 2; i++ {
				switch resp := get(urls[i%2]); resp.StatusCode {
				case http.StatusOK:
					admitted, refusedBoth = admitted+1, 0
				case http.StatusTooManyRequests:
					refusedBoth++
				default:
					t.Fatalf("request %d: %d", i, resp.StatusCode)
				}
			}
			if admitted != limit {
				t.Fatalf("two replicas admitted %d requests, want the account's %d", admitted, limit)
			}
		})
	}
}

// replicas starts two servers on one new database, their clocks stopped so that the
// allowance does not refill, and returns their URLs and the bootstrap admin's token.
func replicas(t *testing.T, rateLimit int) ([]string, string) {
	urls, token, _ := serveReplicas(t, freshDatabase(t), 2, func(o *apiserver.Options) {
		o.RateLimit, o.Now = rateLimit, func() time.Time { return time.Unix(1_700_000_000, 0) }
	})
	return urls, token
}
