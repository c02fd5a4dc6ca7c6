-- +goose Up
-- The routing revision (store.Routing): one counter that every write transaction changing a
-- kind of store.RoutingKinds moves, so that each replica rebuilds its routing snapshot when it
-- sees the counter move. One row: two routing writes at once conflict on it and one runs
-- again (sqlstore's retry), which routing writes are rare enough to afford; a sequence
-- would not do, as its values are taken out of commit order and a poller could miss one.
CREATE TABLE routing_revision (
    id       integer NOT NULL PRIMARY KEY CHECK (id = 1),
    revision bigint NOT NULL
);
INSERT INTO routing_revision (id, revision) VALUES (1, 0);

-- +goose Down
DROP TABLE routing_revision;
