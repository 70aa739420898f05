"""The older seven-tool search server of spec 003, offered as the `legacy` tool profile.

`tools.py` declares the seven tools with spec 003's parameters and bounds, mapped onto
SearchService.Search (with operators read by mnemo's own parser) and GetRecordDetail;
`render.py` writes spec 003's index and full formats with `claude-mem://` citations.
"""
