"""Helpers shared by the tests, in one package: a test module never imports another test module
(nor a conftest). Fixtures stay in the conftest.py of the folder whose tests use them.

`git` runs git and commits files; `store` opens stores and reads or plants ref blobs; `plumbing`
writes hand-made git objects; `outcomes`, `agents`, `mcp`, `ask`, `loopback` (a model server on
loopback), `citations`, `health`, `org`, `patterns`, `report`, `chromium`, `sync` and `upkeep`
serve the tests of that part.
"""
