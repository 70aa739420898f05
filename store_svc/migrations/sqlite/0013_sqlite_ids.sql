-- per-project record ids on SQLite team stores
-- The ids of postgres/0010_ids.sql on SQLite, for a store shared through user tokens: once a
-- store holds a user token, each (record table, project) has a counter and a random slot and
--     id = (base + n) * 2^20 + slot        (n-th row of the project, slot unique per table)
-- so the step between two of a project's ids counts only that project's own inserts, whatever
-- the others write. A SQLite trigger cannot choose a row's id, so store_svc/ids.py draws it in
-- the writer's transaction (SQLite has one writer at a time) and every insert names it. A
-- store that never had a user token (one developer's) keeps AUTOINCREMENT: id_bases stays
-- empty. The switch is for good: `base` starts each table's new ids above every id it gave out
-- (its largest row or its AUTOINCREMENT sequence, whichever is higher), so none is reused.
CREATE TABLE id_bases (record_table TEXT PRIMARY KEY, base INTEGER NOT NULL);
CREATE TABLE id_spaces (
  record_table TEXT NOT NULL,
  project TEXT NOT NULL,
  slot INTEGER NOT NULL,
  used INTEGER NOT NULL,
  PRIMARY KEY (record_table, project),
  UNIQUE (record_table, slot)
);
CREATE TRIGGER access_tokens_id_spaces AFTER INSERT ON access_tokens
WHEN NOT EXISTS (SELECT 1 FROM id_bases)
BEGIN
  INSERT INTO id_bases(record_table, base) SELECT 'sdk_sessions', max(coalesce((SELECT max(id) FROM sdk_sessions), 0),
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'sdk_sessions'), 0)) / 1048576 + 1;
  INSERT INTO id_bases(record_table, base) SELECT 'observations', max(coalesce((SELECT max(id) FROM observations), 0),
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'observations'), 0)) / 1048576 + 1;
  INSERT INTO id_bases(record_table, base) SELECT 'session_summaries', max(coalesce((SELECT max(id) FROM session_summaries), 0),
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'session_summaries'), 0)) / 1048576 + 1;
  INSERT INTO id_bases(record_table, base) SELECT 'user_prompts', max(coalesce((SELECT max(id) FROM user_prompts), 0),
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'user_prompts'), 0)) / 1048576 + 1;
  INSERT INTO id_bases(record_table, base) SELECT 'tool_uses', max(coalesce((SELECT max(id) FROM tool_uses), 0),
    coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'tool_uses'), 0)) / 1048576 + 1;
END;
INSERT INTO id_bases(record_table, base) SELECT 'sdk_sessions', max(coalesce((SELECT max(id) FROM sdk_sessions), 0),
  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'sdk_sessions'), 0)) / 1048576 + 1 WHERE EXISTS (SELECT 1 FROM access_tokens);
INSERT INTO id_bases(record_table, base) SELECT 'observations', max(coalesce((SELECT max(id) FROM observations), 0),
  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'observations'), 0)) / 1048576 + 1 WHERE EXISTS (SELECT 1 FROM access_tokens);
INSERT INTO id_bases(record_table, base) SELECT 'session_summaries', max(coalesce((SELECT max(id) FROM session_summaries), 0),
  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'session_summaries'), 0)) / 1048576 + 1 WHERE EXISTS (SELECT 1 FROM access_tokens);
INSERT INTO id_bases(record_table, base) SELECT 'user_prompts', max(coalesce((SELECT max(id) FROM user_prompts), 0),
  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'user_prompts'), 0)) / 1048576 + 1 WHERE EXISTS (SELECT 1 FROM access_tokens);
INSERT INTO id_bases(record_table, base) SELECT 'tool_uses', max(coalesce((SELECT max(id) FROM tool_uses), 0),
  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'tool_uses'), 0)) / 1048576 + 1 WHERE EXISTS (SELECT 1 FROM access_tokens);
