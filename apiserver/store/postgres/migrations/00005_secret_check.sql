-- +goose Up
-- One value sealed with the secret key when sealing first met the database: opening it at
-- start-up tells a wrong key apart from the right one before any request needs a secret.
CREATE TABLE secret_check (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    value BYTEA NOT NULL
);

-- +goose Down
DROP TABLE secret_check;
