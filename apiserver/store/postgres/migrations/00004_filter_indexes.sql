-- +goose Up
-- List filters run in SQL over the documents (sqlstore.PostgresJSON). The documents are
-- stored as bytea (their exact text is the response); warren_doc reads one as jsonb. The
-- UTF-8 conversion never changes, so the function is immutable, which indexes need.
-- +goose StatementBegin
CREATE FUNCTION warren_doc(doc bytea) RETURNS jsonb
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT convert_from(doc, 'UTF8')::jsonb $$;
-- +goose StatementEnd

-- warren_text reads a member as a filter's string: "" when absent or null, a ref by its id.
-- Its argument is named three times: being costly, PostgreSQL computes it once.
-- +goose StatementBegin
CREATE FUNCTION warren_text(v jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(CASE jsonb_typeof(v) WHEN 'object' THEN v ->> 'id' ELSE v #>> '{}' END, '') $$;
-- +goose StatementEnd

-- The members that lists are filtered on to find a few objects among many: the owner of
-- keys and credentials, and metadata (the caller's own key for an object). Each expression
-- must be written exactly as sqlstore.PostgresJSON.Text writes it.
CREATE INDEX objects_owner_id ON objects (account_id, kind, parent_id, warren_text(warren_doc(doc) #> '{owner_id}'), id);
CREATE INDEX objects_metadata ON objects (account_id, kind, parent_id, warren_text(warren_doc(doc) #> '{metadata}'), id);

-- +goose Down
DROP INDEX objects_metadata;
DROP INDEX objects_owner_id;
DROP FUNCTION warren_text(jsonb);
DROP FUNCTION warren_doc(bytea);
