-- lexical context of observations
CREATE INDEX idx_observations_session_created ON observations(memory_session_id, created_at_epoch, id);
CREATE TABLE observation_context (
  id BIGINT PRIMARY KEY,
  context TEXT NOT NULL,
  fts tsvector GENERATED ALWAYS AS (setweight(to_tsvector('mnemo'::regconfig, mnemo_words(context)), 'D')) STORED
);
INSERT INTO observation_context(id, context)
  SELECT id, trim(coalesce(lag(t, 1) OVER w, '') || ' ' || coalesce(lag(t, 2) OVER w, '') || ' ' || coalesce(lag(t, 3) OVER w, '')) FROM (SELECT id, memory_session_id, created_at_epoch, substr(coalesce(o.title, '') || ' ' || coalesce(o.subtitle, '') || ' ' || coalesce(o.narrative, '') || ' ' || coalesce(o.text, ''), 1, 1000) AS t
    FROM observations o) s
  WINDOW w AS (PARTITION BY memory_session_id ORDER BY created_at_epoch, id);
CREATE INDEX idx_observation_context_fts ON observation_context USING gin (fts)
  WITH (gin_pending_list_limit = 1024);
CREATE FUNCTION mnemo_context() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM observation_context WHERE id = OLD.id;
    -- A forgotten record's words leave the context of the rows after it.
    UPDATE observation_context c SET context = (SELECT coalesce((SELECT string_agg(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.memory_session_id = me.memory_session_id AND p.id <> me.id
      AND (p.created_at_epoch, p.id) < (me.created_at_epoch, me.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), '')
      FROM observations me WHERE me.id = c.id) WHERE c.id IN (SELECT n.id FROM observations n WHERE n.memory_session_id = OLD.memory_session_id
    AND (n.created_at_epoch, n.id) > (OLD.created_at_epoch, OLD.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3);
    RETURN OLD;
  END IF;
  INSERT INTO observation_context(id, context) VALUES (NEW.id, coalesce((SELECT string_agg(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.memory_session_id = NEW.memory_session_id AND p.id <> NEW.id
      AND (p.created_at_epoch, p.id) < (NEW.created_at_epoch, NEW.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), ''));
  RETURN NEW;
END $$;
CREATE TRIGGER observations_context AFTER INSERT OR DELETE ON observations
  FOR EACH ROW EXECUTE FUNCTION mnemo_context();
