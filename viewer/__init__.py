"""The viewer (`mnemo ui`) and the terminal commands that look at and curate the memory.

A process of its own and a client of search_svc, like the gateway: it holds no state
beyond its login token, and every record it shows is untrusted data, escaped on output.
"""
