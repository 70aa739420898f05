-- session ids per project
-- A session id (host or memory) names a session within its project, not across the server: a
-- token confined to one project that writes into a session id another project holds gets a new
-- session of its own project, exactly as for an id nobody holds (with one name space it was
-- refused, and so learned that the id existed elsewhere). Sessions are unique per (project,
-- platform, host id) and per (project, memory id). Observations and summaries name their session
-- row (`session_db_id`, as prompts and tool uses already did): the memory id alone no longer says
-- which project's session it is. Filled here from the memory id, unique until now; a record whose
-- memory id has no session keeps none. What hangs off a session follows the row: the dedupe keys
-- (content hash within the record's project, tool use id) and the context of an observation (its
-- session's rows before it).
-- SQLite cannot drop a UNIQUE column constraint: sdk_sessions is rebuilt with its ids and its
-- AUTOINCREMENT high-water mark (the runner turns foreign keys off, so nothing cascades; the
-- legacy rename leaves the triggers that name sdk_sessions as they are). The triggers an UPDATE
-- would fire (full text, change feed) are dropped while the new column is filled, then made again
-- as they were, but for the context neighbours: the rows of the same session row.
PRAGMA legacy_alter_table = ON;
CREATE TEMP TABLE sessions_seq_v15 AS SELECT seq FROM sqlite_sequence WHERE name = 'sdk_sessions';
CREATE TABLE sdk_sessions_v15 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  content_session_id TEXT NOT NULL,
  memory_session_id TEXT,
  project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude',
  user_prompt TEXT,
  started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL,
  completed_at TEXT,
  completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'failed')),
  prompt_counter INTEGER NOT NULL DEFAULT 0,
  custom_title TEXT,
  external_id TEXT,
  writer TEXT NOT NULL DEFAULT ''
);
INSERT INTO sdk_sessions_v15(id, content_session_id, memory_session_id, project, platform_source, user_prompt, started_at,
                             started_at_epoch, completed_at, completed_at_epoch, status, prompt_counter, custom_title,
                             external_id, writer)
  SELECT id, content_session_id, memory_session_id, project, platform_source, user_prompt, started_at, started_at_epoch,
         completed_at, completed_at_epoch, status, prompt_counter, custom_title, external_id, writer
  FROM sdk_sessions;
DROP TABLE sdk_sessions;
ALTER TABLE sdk_sessions_v15 RENAME TO sdk_sessions;
PRAGMA legacy_alter_table = OFF;
DELETE FROM sqlite_sequence WHERE name = 'sdk_sessions';
INSERT INTO sqlite_sequence(name, seq) SELECT 'sdk_sessions', high FROM (SELECT max(s) AS high FROM (
  SELECT seq AS s FROM temp.sessions_seq_v15 UNION ALL SELECT max(id) FROM sdk_sessions)) WHERE high IS NOT NULL;
DROP TABLE temp.sessions_seq_v15;
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content ON sdk_sessions(project, platform_source, content_session_id);
CREATE UNIQUE INDEX ux_sdk_sessions_memory ON sdk_sessions(project, memory_session_id);
CREATE UNIQUE INDEX ux_sdk_sessions_external ON sdk_sessions(project, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX idx_sdk_sessions_content ON sdk_sessions(content_session_id);
CREATE INDEX idx_sdk_sessions_memory ON sdk_sessions(memory_session_id);
CREATE INDEX idx_sdk_sessions_project ON sdk_sessions(project);
CREATE INDEX idx_sdk_sessions_started ON sdk_sessions(started_at_epoch DESC);

DROP TRIGGER observations_ai;
DROP TRIGGER observations_ad;
DROP TRIGGER observations_au;
DROP TRIGGER session_summaries_au;
ALTER TABLE observations ADD COLUMN session_db_id INTEGER;
UPDATE observations SET session_db_id = (SELECT s.id FROM sdk_sessions s WHERE s.memory_session_id = observations.memory_session_id);
ALTER TABLE session_summaries ADD COLUMN session_db_id INTEGER;
UPDATE session_summaries SET session_db_id = (SELECT s.id FROM sdk_sessions s
  WHERE s.memory_session_id = session_summaries.memory_session_id);
DROP INDEX ux_observations_session_hash;
CREATE UNIQUE INDEX ux_observations_session_hash ON observations(session_db_id, project, content_hash);
DROP INDEX idx_observations_session_created;
CREATE INDEX idx_observations_session_created ON observations(session_db_id, created_at_epoch, id);
DROP INDEX idx_session_summaries_session;
CREATE INDEX idx_session_summaries_session ON session_summaries(session_db_id, created_at_epoch);
DROP INDEX ux_tool_uses_session_call;
CREATE UNIQUE INDEX ux_tool_uses_session_call ON tool_uses(session_db_id, tool_use_id) WHERE tool_use_id IS NOT NULL;
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observation_context(id, context) VALUES (new.id, coalesce((SELECT group_concat(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.session_db_id = new.session_db_id AND p.id <> new.id
      AND (p.created_at_epoch, p.id) < (new.created_at_epoch, new.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), ''));
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, text, facts, concepts, context) VALUES (new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts, (SELECT coalesce((SELECT context FROM observation_context WHERE id = new.id), '')));
  INSERT INTO observations_tri(rowid, title, subtitle, narrative, text, facts, concepts) SELECT new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts WHERE coalesce(new.has_cjk, (coalesce(new.title, '') || ' ' || coalesce(new.subtitle, '') || ' ' || coalesce(new.narrative, '') || ' ' || coalesce(new.text, '') || ' ' || coalesce(new.facts, '') || ' ' || coalesce(new.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (1, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, text, facts, concepts, context) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts, (SELECT coalesce((SELECT context FROM observation_context WHERE id = old.id), '')));
  DELETE FROM observation_context WHERE id = old.id;
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, text, facts, concepts, context)
    SELECT 'delete', * FROM (SELECT id, title, subtitle, narrative, text, facts, concepts, context FROM observations_fts_source WHERE id IN (SELECT n.id FROM observations n WHERE n.session_db_id = old.session_db_id
    AND (n.created_at_epoch, n.id) > (old.created_at_epoch, old.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3));
  UPDATE observation_context SET context = (SELECT coalesce((SELECT group_concat(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.session_db_id = me.session_db_id AND p.id <> me.id
      AND (p.created_at_epoch, p.id) < (me.created_at_epoch, me.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), '') FROM observations me
    WHERE me.id = observation_context.id) WHERE id IN (SELECT n.id FROM observations n WHERE n.session_db_id = old.session_db_id
    AND (n.created_at_epoch, n.id) > (old.created_at_epoch, old.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3);
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, text, facts, concepts, context) SELECT id, title, subtitle, narrative, text, facts, concepts, context FROM observations_fts_source WHERE id IN (SELECT n.id FROM observations n WHERE n.session_db_id = old.session_db_id
    AND (n.created_at_epoch, n.id) > (old.created_at_epoch, old.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3);
  INSERT INTO observations_tri(observations_tri, rowid, title, subtitle, narrative, text, facts, concepts) SELECT 'delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts WHERE coalesce(old.has_cjk, (coalesce(old.title, '') || ' ' || coalesce(old.subtitle, '') || ' ' || coalesce(old.narrative, '') || ' ' || coalesce(old.text, '') || ' ' || coalesce(old.facts, '') || ' ' || coalesce(old.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (1, old.id, 2, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
  INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, text, facts, concepts, context) VALUES ('delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts, (SELECT coalesce((SELECT context FROM observation_context WHERE id = old.id), '')));
  INSERT INTO observations_tri(observations_tri, rowid, title, subtitle, narrative, text, facts, concepts) SELECT 'delete', old.id, old.title, old.subtitle, old.narrative, old.text, old.facts, old.concepts WHERE coalesce(old.has_cjk, (coalesce(old.title, '') || ' ' || coalesce(old.subtitle, '') || ' ' || coalesce(old.narrative, '') || ' ' || coalesce(old.text, '') || ' ' || coalesce(old.facts, '') || ' ' || coalesce(old.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, text, facts, concepts, context) VALUES (new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts, (SELECT coalesce((SELECT context FROM observation_context WHERE id = new.id), '')));
  INSERT INTO observations_tri(rowid, title, subtitle, narrative, text, facts, concepts) SELECT new.id, new.title, new.subtitle, new.narrative, new.text, new.facts, new.concepts WHERE coalesce(new.has_cjk, (coalesce(new.title, '') || ' ' || coalesce(new.subtitle, '') || ' ' || coalesce(new.narrative, '') || ' ' || coalesce(new.text, '') || ' ' || coalesce(new.facts, '') || ' ' || coalesce(new.concepts, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (1, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
CREATE TRIGGER session_summaries_au AFTER UPDATE ON session_summaries BEGIN
  INSERT INTO session_summaries_fts(session_summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes) VALUES ('delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
  INSERT INTO session_summaries_tri(session_summaries_tri, rowid, request, investigated, learned, completed, next_steps, notes) SELECT 'delete', old.id, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes WHERE coalesce(old.has_cjk, (coalesce(old.request, '') || ' ' || coalesce(old.investigated, '') || ' ' || coalesce(old.learned, '') || ' ' || coalesce(old.completed, '') || ' ' || coalesce(old.next_steps, '') || ' ' || coalesce(old.notes, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO session_summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes) VALUES (new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
  INSERT INTO session_summaries_tri(rowid, request, investigated, learned, completed, next_steps, notes) SELECT new.id, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes WHERE coalesce(new.has_cjk, (coalesce(new.request, '') || ' ' || coalesce(new.investigated, '') || ' ' || coalesce(new.learned, '') || ' ' || coalesce(new.completed, '') || ' ' || coalesce(new.next_steps, '') || ' ' || coalesce(new.notes, '')) GLOB '*[⺀-鿿가-힯豈-﫿ｦ-ﾟ฀-໿က-႟ក-៿]*');
  INSERT INTO change_feed(kind, record_id, op, created_at_epoch) VALUES (2, new.id, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
END;
