-- per-project record ids
-- Record ids on the team server: one id space per project, so the ids a user gets back say
-- nothing about other projects' writes (with one global sequence, the gap between two of a
-- user's ids was what every other project wrote in between). Each (record table, project)
-- has a counter and a slot drawn at random when the project writes its first row there:
--     id = (base + n) * 2^20 + slot        (n-th row of the project, slot unique per table)
-- so the step between two of a project's ids is 2^20 times the rows that project itself
-- inserted in between (an insert that met a duplicate, ON CONFLICT DO NOTHING, counts too),
-- whatever others do, and the slot does not tell how many projects came before. Still true of every id: unique per table,
-- below 2^53 (exact as a JSON number), increasing in write order within a project (timelines
-- and an observation's context order by (created_at_epoch, id) within one session), never
-- reused after a Forget, fetched by plain number; the change feed keeps its own sequence
-- (change_feed.seq, vector_svc's watermark). A database from before keeps the ids it gave
-- out: `base` starts each table's new ids above its largest old one (its size at this
-- migration, rounded to 2^20, is all it tells). Counters are bumped in the writer's
-- transaction, under the store's write lock (store_svc/pg/backend.py), so two replicas never
-- hand out one id. SQLite keeps AUTOINCREMENT (a SQLite trigger cannot choose a row's id;
-- a SQLite store is one user's: docs/server.md sends a team with per-user tokens to PostgreSQL).
CREATE TABLE id_bases (record_table TEXT PRIMARY KEY, base BIGINT NOT NULL);
CREATE TABLE id_spaces (
  record_table TEXT NOT NULL,
  project TEXT NOT NULL,
  slot BIGINT NOT NULL,
  used BIGINT NOT NULL,
  PRIMARY KEY (record_table, project),
  UNIQUE (record_table, slot)
);
CREATE FUNCTION mnemo_next_id(tbl text, proj text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE s bigint; n bigint; b bigint; tries int := 0;
BEGIN
  UPDATE id_spaces SET used = used + 1 WHERE record_table = tbl AND project = proj RETURNING slot, used INTO s, n;
  IF NOT FOUND THEN
    LOOP
      s := floor(random() * 1048576)::bigint;
      EXIT WHEN NOT EXISTS (SELECT 1 FROM id_spaces WHERE record_table = tbl AND slot = s);
      tries := tries + 1;
      IF tries >= 64 THEN
        RAISE EXCEPTION 'mnemo: no free id slot left in % for a new project', tbl;
      END IF;
    END LOOP;
    n := 1;
    INSERT INTO id_spaces(record_table, project, slot, used) VALUES (tbl, proj, s, 1);
  END IF;
  SELECT base INTO b FROM id_bases WHERE record_table = tbl;
  IF b + n >= 8589934592 THEN
    RAISE EXCEPTION 'mnemo: the ids of project % in % are used up', proj, tbl;
  END IF;
  RETURN (b + n) * 1048576 + s;
END $$;
CREATE FUNCTION mnemo_record_id() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE proj text;
BEGIN
  IF NEW.id IS NOT NULL THEN
    RETURN NEW;
  END IF;
  IF TG_ARGV[0] = 'session' THEN
    SELECT s.project INTO proj FROM sdk_sessions s WHERE s.id = NEW.session_db_id;
  ELSE
    proj := NEW.project;
  END IF;
  NEW.id := mnemo_next_id(TG_TABLE_NAME, coalesce(proj, ''));
  RETURN NEW;
END $$;

ALTER TABLE sdk_sessions ALTER COLUMN id DROP IDENTITY IF EXISTS;
INSERT INTO id_bases(record_table, base) SELECT 'sdk_sessions', coalesce(max(id), 0) / 1048576 + 1 FROM sdk_sessions;
CREATE TRIGGER sdk_sessions_id BEFORE INSERT ON sdk_sessions FOR EACH ROW EXECUTE FUNCTION mnemo_record_id('own');

ALTER TABLE observations ALTER COLUMN id DROP IDENTITY IF EXISTS;
INSERT INTO id_bases(record_table, base) SELECT 'observations', coalesce(max(id), 0) / 1048576 + 1 FROM observations;
CREATE TRIGGER observations_id BEFORE INSERT ON observations FOR EACH ROW EXECUTE FUNCTION mnemo_record_id('own');

ALTER TABLE session_summaries ALTER COLUMN id DROP IDENTITY IF EXISTS;
INSERT INTO id_bases(record_table, base) SELECT 'session_summaries', coalesce(max(id), 0) / 1048576 + 1 FROM session_summaries;
CREATE TRIGGER session_summaries_id BEFORE INSERT ON session_summaries FOR EACH ROW EXECUTE FUNCTION mnemo_record_id('own');

ALTER TABLE user_prompts ALTER COLUMN id DROP IDENTITY IF EXISTS;
INSERT INTO id_bases(record_table, base) SELECT 'user_prompts', coalesce(max(id), 0) / 1048576 + 1 FROM user_prompts;
CREATE TRIGGER user_prompts_id BEFORE INSERT ON user_prompts FOR EACH ROW EXECUTE FUNCTION mnemo_record_id('session');

ALTER TABLE tool_uses ALTER COLUMN id DROP IDENTITY IF EXISTS;
INSERT INTO id_bases(record_table, base) SELECT 'tool_uses', coalesce(max(id), 0) / 1048576 + 1 FROM tool_uses;
CREATE TRIGGER tool_uses_id BEFORE INSERT ON tool_uses FOR EACH ROW EXECUTE FUNCTION mnemo_record_id('session');
