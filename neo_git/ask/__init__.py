"""`git neo ask`: providers, memory-driven reasoning effort, and a plan–code–verify loop
(docs/architecture.md §8).

    from neo_git import NeoEngine
    result = NeoEngine.open(".").ask("why does the importer retry on 429?", files=["src/importer.py"])
    result.effort, result.plan, result.suggestions, result.tokens_in

Modules: `model` (value types), `effort` (difficulty and effort), `settings` (provider
settings and keys), `providers` (the registry) with one module per provider, `prompt`
(assembly), `replies` (lenient reply parsing), `verify` (syntax and constraint checks),
`loop` (the calls), `learning` (suggestions, confidence), `usage` (token log, stats),
`engine` (NeoEngine). Nothing here imports an SDK at module level.
"""
