"""Non-test modules the unit and integration tests share: tiny real models made on the spot,
a local chat-completions server, small input files and the studies they belong to.

A test module imports its helpers from here, never from another test module. Nothing here is
collected (no ``test_`` prefix) and nothing here starts a process.
"""
