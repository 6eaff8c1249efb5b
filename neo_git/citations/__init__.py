"""Facts anchored to code (docs/architecture.md §13): citations resolved with the health engine's grammars,
fingerprints that ignore whitespace and comments, verification against a revision, path scope.

| module | job |
|---|---|
| `languages` | which symbol query (`neo_git/health/languages/<lang>.symbols.scm`) each language uses |
| `fingerprint`, `symbols` | token streams and their digests; a file's citable symbols |
| `code` | a blob's fingerprint and symbols, cached by blob id (`.git/neo/citations.sqlite`) |
| `resolve` | `--cite PATH[:SYMBOL|:START-END]` → a citation, checked against the work tree / HEAD |
| `verify` | a citation against a commit: verified / moved / changed / gone / unknown |
| `states`, `pathglob` | what states mean for a fact (stale), path-scope globs (standard library only) |
| `recording`, `audit` | writing states on the facts: the commit worker, `git neo verify` (feature layer) |

Importing the package loads nothing: recall imports `states` and `pathglob` on every question.
"""
