-- records marked wrong
CREATE TABLE marked_wrong (
  kind INTEGER NOT NULL,
  record_id INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  marked_at_epoch INTEGER NOT NULL,
  PRIMARY KEY (kind, record_id)
) WITHOUT ROWID;
CREATE TRIGGER observations_ad_marked_wrong AFTER DELETE ON observations BEGIN
  DELETE FROM marked_wrong WHERE kind = 1 AND record_id = old.id;
END;
CREATE TRIGGER session_summaries_ad_marked_wrong AFTER DELETE ON session_summaries BEGIN
  DELETE FROM marked_wrong WHERE kind = 2 AND record_id = old.id;
END;
CREATE TRIGGER user_prompts_ad_marked_wrong AFTER DELETE ON user_prompts BEGIN
  DELETE FROM marked_wrong WHERE kind = 3 AND record_id = old.id;
END;
