-- +goose Up
-- The token buckets of the API rate limit, shared by the replicas (store.RateBuckets).
-- UNLOGGED: a transaction that writes only this table writes no WAL, so its commit waits
-- for no disk flush and a take costs one round trip. A crash empties the table, which only
-- gives every account its full allowance again.
CREATE UNLOGGED TABLE rate_limits (
    bucket     TEXT NOT NULL PRIMARY KEY,
    tokens     DOUBLE PRECISION NOT NULL, -- left after the last take
    updated_at BIGINT NOT NULL,           -- of the last take, Unix microseconds
    taken      BIGINT NOT NULL            -- by the last take
);

-- +goose Down
DROP TABLE rate_limits;
