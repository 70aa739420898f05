-- records marked wrong
CREATE TABLE marked_wrong (
  kind BIGINT NOT NULL,
  record_id BIGINT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  marked_at_epoch BIGINT NOT NULL,
  PRIMARY KEY (kind, record_id)
);
CREATE FUNCTION mnemo_forget_marks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM marked_wrong WHERE kind = TG_ARGV[0]::bigint AND record_id = OLD.id;
  RETURN OLD;
END $$;
CREATE TRIGGER observations_ad_marked_wrong AFTER DELETE ON observations FOR EACH ROW EXECUTE FUNCTION mnemo_forget_marks(1);
CREATE TRIGGER session_summaries_ad_marked_wrong AFTER DELETE ON session_summaries FOR EACH ROW EXECUTE FUNCTION mnemo_forget_marks(2);
CREATE TRIGGER user_prompts_ad_marked_wrong AFTER DELETE ON user_prompts FOR EACH ROW EXECUTE FUNCTION mnemo_forget_marks(3);
