-- project corpora primed again
-- Migration 12 gave each project's corpus a passage index of its own (vector_svc's collection
-- `pcorpus_<hash of project and name>`, where it was `corpus_<name>`): the index a corpus of a
-- project was primed into before is not the one it is read from now. Such a corpus is marked
-- unprimed, so list_corpora says so and query_corpus asks for prime_corpus, instead of
-- claiming an index it does not find. A corpus over all projects keeps its index and state.
UPDATE corpora SET priming_state = 'unprimed', digest_json = ''
  WHERE project <> '' AND priming_state IN ('primed', 'stale');
