-- word counts for specificity
CREATE TABLE term_stats (term TEXT PRIMARY KEY, docs BIGINT NOT NULL);
CREATE FUNCTION mnemo_terms(body text) RETURNS SETOF text LANGUAGE sql IMMUTABLE AS $$
  SELECT DISTINCT w FROM regexp_split_to_table(lower(left(coalesce(body, ''), 1000)), '[^[:alnum:]]+') AS w
  WHERE length(w) > 1 AND w !~ '^[0-9]+$' AND w NOT IN ('a', 'about', 'above', 'after', 'again', 'against', 'all', 'also', 'am', 'an', 'and', 'any', 'anything', 'are', 'as', 'at', 'be', 'because', 'been', 'before', 'being', 'below', 'between', 'both', 'but', 'by', 'can', 'could', 'couldn', 'd', 'did', 'didn', 'do', 'does', 'doesn', 'doing', 'don', 'down', 'during', 'each', 'ever', 'few', 'find', 'for', 'from', 'further', 'get', 'give', 'got', 'had', 'has', 'have', 'having', 'he', 'her', 'here', 'hers', 'herself', 'him', 'himself', 'his', 'how', 'i', 'if', 'in', 'into', 'is', 'isn', 'it', 'its', 'itself', 'just', 'let', 'll', 'm', 'me', 'more', 'most', 'my', 'myself', 'no', 'nor', 'not', 'now', 'of', 'off', 'on', 'once', 'only', 'or', 'other', 'our', 'ours', 'ourselves', 'out', 'over', 'own', 'please', 're', 's', 'same', 'she', 'should', 'shouldn', 'show', 'so', 'some', 'something', 'such', 't', 'tell', 'than', 'that', 'the', 'their', 'theirs', 'them', 'themselves', 'then', 'there', 'these', 'they', 'this', 'those', 'through', 'to', 'too', 'under', 'until', 'up', 've', 'very', 'was', 'wasn', 'we', 'were', 'weren', 'what', 'when', 'where', 'which', 'while', 'who', 'whom', 'why', 'will', 'with', 'won', 'would', 'wouldn', 'you', 'your', 'yours', 'yourself', 'yourselves')
$$;
INSERT INTO term_stats(term, docs) SELECT w, count(*) FROM (SELECT coalesce(nullif(x.narrative, ''), x.text, '') AS body FROM observations x UNION ALL SELECT x.prompt_text AS body FROM user_prompts x) b, mnemo_terms(b.body) AS w GROUP BY w;
INSERT INTO term_stats(term, docs) SELECT '', (SELECT count(*) FROM observations) + (SELECT count(*) FROM user_prompts);
CREATE FUNCTION mnemo_term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_body text;
  new_body text;
BEGIN
  IF TG_TABLE_NAME = 'observations' THEN
    IF TG_OP <> 'INSERT' THEN old_body := coalesce(nullif(OLD.narrative, ''), OLD.text, ''); END IF;
    IF TG_OP <> 'DELETE' THEN new_body := coalesce(nullif(NEW.narrative, ''), NEW.text, ''); END IF;
  ELSIF TG_TABLE_NAME = 'user_prompts' THEN
    IF TG_OP <> 'INSERT' THEN old_body := OLD.prompt_text; END IF;
    IF TG_OP <> 'DELETE' THEN new_body := NEW.prompt_text; END IF;
  END IF;
  IF TG_OP = 'UPDATE' AND old_body IS NOT DISTINCT FROM new_body THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    UPDATE term_stats SET docs = docs - 1 WHERE term = '' OR term IN (SELECT mnemo_terms(old_body));
    DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT mnemo_terms(old_body));
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO term_stats(term, docs) SELECT w, 1 FROM mnemo_terms(new_body) AS w
      ON CONFLICT (term) DO UPDATE SET docs = term_stats.docs + 1;
    INSERT INTO term_stats(term, docs) VALUES ('', 1) ON CONFLICT (term) DO UPDATE SET docs = term_stats.docs + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER observations_terms AFTER INSERT OR DELETE OR UPDATE OF narrative, text ON observations FOR EACH ROW EXECUTE FUNCTION mnemo_term_stats();
CREATE TRIGGER user_prompts_terms AFTER INSERT OR DELETE OR UPDATE OF prompt_text ON user_prompts FOR EACH ROW EXECUTE FUNCTION mnemo_term_stats();
