-- lexical context of observations
DROP TRIGGER observations_ai;
DROP TRIGGER observations_ad;
DROP TRIGGER observations_au;
DROP TABLE observations_fts;
CREATE INDEX idx_observations_session_created ON observations(memory_session_id, created_at_epoch, id);
CREATE TABLE observation_context (
  id INTEGER PRIMARY KEY,
  context TEXT NOT NULL
);
INSERT INTO observation_context(id, context)
  SELECT id, trim(coalesce(lag(t, 1) OVER w, '') || ' ' || coalesce(lag(t, 2) OVER w, '') || ' ' || coalesce(lag(t, 3) OVER w, '')) FROM (SELECT id, memory_session_id, created_at_epoch, substr(coalesce(o.title, '') || ' ' || coalesce(o.subtitle, '') || ' ' || coalesce(o.narrative, '') || ' ' || coalesce(o.text, ''), 1, 1000) AS t
    FROM observations o) s
  WINDOW w AS (PARTITION BY memory_session_id ORDER BY created_at_epoch, id);
CREATE VIEW observations_fts_source AS
  SELECT o.id AS id, o.title AS title, o.subtitle AS subtitle, o.narrative AS narrative, o.text AS text, o.facts AS facts, o.concepts AS concepts, coalesce(c.context, '') AS context
  FROM observations o LEFT JOIN observation_context c ON c.id = o.id;
CREATE VIRTUAL TABLE observations_fts USING fts5(title, subtitle, narrative, text, facts, concepts, context, content='observations_fts_source',
  content_rowid='id', tokenize='porter unicode61');
INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
  INSERT INTO observation_context(id, context) VALUES (new.id, coalesce((SELECT group_concat(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.memory_session_id = new.memory_session_id AND p.id <> new.id
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
    SELECT 'delete', * FROM (SELECT id, title, subtitle, narrative, text, facts, concepts, context FROM observations_fts_source WHERE id IN (SELECT n.id FROM observations n WHERE n.memory_session_id = old.memory_session_id
    AND (n.created_at_epoch, n.id) > (old.created_at_epoch, old.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3));
  UPDATE observation_context SET context = (SELECT coalesce((SELECT group_concat(t, ' ') FROM (
    SELECT substr(coalesce(p.title, '') || ' ' || coalesce(p.subtitle, '') || ' ' || coalesce(p.narrative, '') || ' ' || coalesce(p.text, ''), 1, 1000) AS t FROM observations p
    WHERE p.memory_session_id = me.memory_session_id AND p.id <> me.id
      AND (p.created_at_epoch, p.id) < (me.created_at_epoch, me.id)
    ORDER BY p.created_at_epoch DESC, p.id DESC LIMIT 3) earlier), '') FROM observations me
    WHERE me.id = observation_context.id) WHERE id IN (SELECT n.id FROM observations n WHERE n.memory_session_id = old.memory_session_id
    AND (n.created_at_epoch, n.id) > (old.created_at_epoch, old.id)
    ORDER BY n.created_at_epoch, n.id LIMIT 3);
  INSERT INTO observations_fts(rowid, title, subtitle, narrative, text, facts, concepts, context) SELECT id, title, subtitle, narrative, text, facts, concepts, context FROM observations_fts_source WHERE id IN (SELECT n.id FROM observations n WHERE n.memory_session_id = old.memory_session_id
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
