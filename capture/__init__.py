"""Capture: what an agent host's hooks send becomes sessions, prompts, raw tool uses,
observations and summaries in store_svc.

Modules here import only the standard library at top level (plus mnemo.privacy), so a
hook process stays fast; grpc and the generated stubs are imported by `hooks` when a
hook actually talks to the store.
"""
