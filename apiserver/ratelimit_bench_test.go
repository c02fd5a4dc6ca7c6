package apiserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
)

// The package's TestMain (helpers_test.go) stops the shared PostgreSQL cluster.

// BenchmarkRateLimit is what the rate limit costs a request: in memory (one process), on
// PostgreSQL with one round trip per request (a lease of one token, as at 120 per minute),
// and with the default allowance's lease (60 tokens per round trip). The allowance is
// large enough that every request passes, as in normal operation.
//
//	go test ./apiserver/ -run '^$' -bench RateLimit
func BenchmarkRateLimit(b *testing.B) {
	const perMinute = 1 << 40 // never refused: the benchmark measures the pass
	run := func(b *testing.B, l *rateLimiter) {
		now := time.Unix(1_700_000_000, 0)
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				if d := l.allow(ctx, "ac_bench", now); !d.allowed {
					b.Fatal("refused")
				}
			}
		})
	}
	b.Run("memory", func(b *testing.B) { run(b, newAccountLimiter(perMinute)) })
	db, err := postgres.Open(context.Background(), pgcluster.Database(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for _, lease := range []int{1, rateLease(DefaultRateLimit)} {
		b.Run(fmt.Sprintf("postgres/lease=%d", lease), func(b *testing.B) {
			l := newRateLimiter(perMinute, db.RateBuckets(), lease)
			l.leaseTTL = time.Hour // the clock is stopped; leases are used up, never lapse
			run(b, l)
		})
	}
}
