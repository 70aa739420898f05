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
-- The change feed's triggers are off while the new column is filled: no record changed.
ALTER TABLE sdk_sessions DROP CONSTRAINT sdk_sessions_memory_session_id_key;
DROP INDEX ux_sdk_sessions_platform_content;
CREATE UNIQUE INDEX ux_sdk_sessions_platform_content ON sdk_sessions(project, platform_source, content_session_id);
CREATE UNIQUE INDEX ux_sdk_sessions_memory ON sdk_sessions(project, memory_session_id);
CREATE INDEX idx_sdk_sessions_memory ON sdk_sessions(memory_session_id);

ALTER TABLE observations DISABLE TRIGGER observations_feed;
ALTER TABLE observations ADD COLUMN session_db_id BIGINT;
UPDATE observations o SET session_db_id = s.id FROM sdk_sessions s WHERE s.memory_session_id = o.memory_session_id;
ALTER TABLE observations ENABLE TRIGGER observations_feed;
ALTER TABLE session_summaries DISABLE TRIGGER session_summaries_feed;
ALTER TABLE session_summaries ADD COLUMN session_db_id BIGINT;
UPDATE session_summaries m SET session_db_id = s.id FROM sdk_sessions s WHERE s.memory_session_id = m.memory_session_id;
ALTER TABLE session_summaries ENABLE TRIGGER session_summaries_feed;
DROP INDEX ux_observations_session_hash;
CREATE UNIQUE INDEX ux_observations_session_hash ON observations(session_db_id, project, content_hash);
DROP INDEX idx_observations_session_created;
CREATE INDEX idx_observations_session_created ON observations(session_db_id, created_at_epoch, id);
DROP INDEX idx_session_summaries_session;
CREATE INDEX idx_session_summaries_session ON session_summaries(session_db_id, created_at_epoch);
DROP INDEX ux_tool_uses_session_call;
CREATE UNIQUE INDEX ux_tool_uses_session_call ON tool_uses(session_db_id, tool_use_id) WHERE tool_use_id IS NOT NULL;
CREATE OR REPLACE FUNCTION mnemo_context() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM observation_context WHERE id = OLD.id;
    -- A forgotten record's words leave the context of the rows after it.
    UPDATE observation_context c SET context = (SELECT coalesce((SELECT string_agg(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.session_db_id = me.session_db_id AND p.id <> me.id
      AND (p.created_at_epoch, p.id) < (me.created_at_epoch, me.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), '')
      FROM observations me WHERE me.id = c.id) WHERE c.id IN (SELECT n.id FROM observations n WHERE n.session_db_id = OLD.session_db_id
    AND (n.created_at_epoch, n.id) > (OLD.created_at_epoch, OLD.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3);
    RETURN OLD;
  END IF;
  INSERT INTO observation_context(id, context) VALUES (NEW.id, coalesce((SELECT string_agg(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.session_db_id = NEW.session_db_id AND p.id <> NEW.id
      AND (p.created_at_epoch, p.id) < (NEW.created_at_epoch, NEW.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), ''));
  RETURN NEW;
END $$;
