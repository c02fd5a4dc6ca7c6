package sqlstore

import (
	"context"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
)

var _ store.SharedBuckets = (*Store)(nil)

// RateBuckets implements store.SharedBuckets: the dialect's TakeTokens statement, or nil
// where the database serves one process (SQLite).
func (s *Store) RateBuckets() store.RateBuckets {
	if s.dialect.TakeTokens == "" {
		return nil
	}
	return rateBuckets{s}
}

type rateBuckets struct{ s *Store }

// Take runs one statement outside any transaction of the caller's: no retry loop, no
// serializable isolation; the database's row lock orders the takes of one bucket.
func (r rateBuckets) Take(ctx context.Context, key string, want int, b store.Bucket, now time.Time) (int, float64, error) {
	var taken int64
	var left float64
	err := r.s.write.QueryRowContext(ctx, r.s.dialect.TakeTokens,
		key, want, b.Size, b.Per.Microseconds(), now.UnixMicro()).Scan(&taken, &left)
	return int(taken), left, r.s.dialect.unavailable(err)
}
