"""The LoCoMo retrieval benchmark (`python -m bench.locomo`, bench/locomo/run.py) and the
offline lever studies built on its candidate lists: cv, lists, lexical, vector, rerank."""
