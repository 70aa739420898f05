-- word counts for specificity
CREATE TABLE term_stats (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO term_stats(term, docs) SELECT j.value, count(*) FROM (SELECT coalesce(nullif(x.narrative, ''), x.text, '') AS body FROM observations x UNION ALL SELECT x.prompt_text AS body FROM user_prompts x) b, json_each(mnemo_terms(b.body)) j GROUP BY j.value;
INSERT INTO term_stats(term, docs) SELECT '', (SELECT count(*) FROM observations) + (SELECT count(*) FROM user_prompts);
CREATE TRIGGER observations_terms_ai AFTER INSERT ON observations BEGIN
  INSERT INTO term_stats(term, docs) SELECT value, 1 FROM json_each(mnemo_terms(coalesce(nullif(new.narrative, ''), new.text, ''))) WHERE true
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
  INSERT INTO term_stats(term, docs) VALUES ('', 1)
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
END;
CREATE TRIGGER observations_terms_ad AFTER DELETE ON observations BEGIN
  UPDATE term_stats SET docs = docs - 1
    WHERE term = '' OR term IN (SELECT value FROM json_each(mnemo_terms(coalesce(nullif(old.narrative, ''), old.text, ''))));
  DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT value FROM json_each(mnemo_terms(coalesce(nullif(old.narrative, ''), old.text, ''))));
END;
CREATE TRIGGER observations_terms_au AFTER UPDATE OF narrative, text ON observations WHEN coalesce(nullif(old.narrative, ''), old.text, '') IS NOT coalesce(nullif(new.narrative, ''), new.text, '') BEGIN
  UPDATE term_stats SET docs = docs - 1
    WHERE term = '' OR term IN (SELECT value FROM json_each(mnemo_terms(coalesce(nullif(old.narrative, ''), old.text, ''))));
  DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT value FROM json_each(mnemo_terms(coalesce(nullif(old.narrative, ''), old.text, ''))));
  INSERT INTO term_stats(term, docs) SELECT value, 1 FROM json_each(mnemo_terms(coalesce(nullif(new.narrative, ''), new.text, ''))) WHERE true
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
  INSERT INTO term_stats(term, docs) VALUES ('', 1)
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
END;
CREATE TRIGGER user_prompts_terms_ai AFTER INSERT ON user_prompts BEGIN
  INSERT INTO term_stats(term, docs) SELECT value, 1 FROM json_each(mnemo_terms(new.prompt_text)) WHERE true
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
  INSERT INTO term_stats(term, docs) VALUES ('', 1)
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
END;
CREATE TRIGGER user_prompts_terms_ad AFTER DELETE ON user_prompts BEGIN
  UPDATE term_stats SET docs = docs - 1
    WHERE term = '' OR term IN (SELECT value FROM json_each(mnemo_terms(old.prompt_text)));
  DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT value FROM json_each(mnemo_terms(old.prompt_text)));
END;
CREATE TRIGGER user_prompts_terms_au AFTER UPDATE OF prompt_text ON user_prompts WHEN old.prompt_text IS NOT new.prompt_text BEGIN
  UPDATE term_stats SET docs = docs - 1
    WHERE term = '' OR term IN (SELECT value FROM json_each(mnemo_terms(old.prompt_text)));
  DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT value FROM json_each(mnemo_terms(old.prompt_text)));
  INSERT INTO term_stats(term, docs) SELECT value, 1 FROM json_each(mnemo_terms(new.prompt_text)) WHERE true
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
  INSERT INTO term_stats(term, docs) VALUES ('', 1)
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
END;
