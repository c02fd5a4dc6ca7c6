-- +goose Up
-- The document in SQLite's binary JSONB beside its text, for the list filters
-- (sqlstore.SQLiteJSON): they read members from it without parsing the text once per member
-- and row. The store writes it with the document (sqlstore.Dialect.DocJSONB): SQLite cannot
-- add a stored generated column to an existing table.
ALTER TABLE objects ADD COLUMN doc_jsonb BLOB;
UPDATE objects SET doc_jsonb = jsonb(CAST(doc AS TEXT));

-- The indexes of 00004 on the same members, read from doc_jsonb. Each expression must be
-- written exactly as sqlstore.SQLiteJSON.Text writes it, or the index serves no query.
DROP INDEX objects_owner_id;
DROP INDEX objects_metadata;
CREATE INDEX objects_owner_id ON objects (account_id, kind, parent_id,
    coalesce(CASE json_type(doc_jsonb, '$.owner_id') WHEN 'object' THEN json_extract(doc_jsonb, '$.owner_id.id') ELSE json_extract(doc_jsonb, '$.owner_id') END, ''),
    id);
CREATE INDEX objects_metadata ON objects (account_id, kind, parent_id,
    coalesce(CASE json_type(doc_jsonb, '$.metadata') WHEN 'object' THEN json_extract(doc_jsonb, '$.metadata.id') ELSE json_extract(doc_jsonb, '$.metadata') END, ''),
    id);

-- +goose Down
DROP INDEX objects_metadata;
DROP INDEX objects_owner_id;
ALTER TABLE objects DROP COLUMN doc_jsonb;
CREATE INDEX objects_owner_id ON objects (account_id, kind, parent_id,
    coalesce(CASE json_type(CAST(doc AS TEXT), '$.owner_id') WHEN 'object' THEN json_extract(CAST(doc AS TEXT), '$.owner_id.id') ELSE json_extract(CAST(doc AS TEXT), '$.owner_id') END, ''),
    id);
CREATE INDEX objects_metadata ON objects (account_id, kind, parent_id,
    coalesce(CASE json_type(CAST(doc AS TEXT), '$.metadata') WHEN 'object' THEN json_extract(CAST(doc AS TEXT), '$.metadata.id') ELSE json_extract(CAST(doc AS TEXT), '$.metadata') END, ''),
    id);
