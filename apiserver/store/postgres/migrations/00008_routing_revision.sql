-- +goose Up
-- The routing revision (store.Routing): a counter per account that every write transaction
-- changing a kind of store.RoutingKinds moves in its account's row; their sum is the
-- revision each replica polls to rebuild its routing snapshot when it moves. A row per
-- account, not one for all: two routing writes at once conflict (and one runs again, by
-- sqlstore's retry) only within one account, where such writes are rare. A sequence would
-- not do: its values are taken out of commit order, and a poller could miss one.
CREATE TABLE routing_revision (
    account_id text NOT NULL PRIMARY KEY,
    revision   bigint NOT NULL
);

-- +goose Down
DROP TABLE routing_revision;
