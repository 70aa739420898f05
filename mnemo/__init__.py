"""mnemo: persistent, searchable memory for coding agents.

The shared package holds what every process needs: configuration, logging, the gRPC
server bootstrap and client channels, the error taxonomy, and the generated stubs
(`mnemo.v1`). Imports here stay light: hooks start a fresh interpreter per event.
"""

__version__ = "0.1.0"
