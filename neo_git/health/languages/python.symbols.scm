; Python: what a citation can name (neo_git/citations/symbols.py reads these captures).
;   @definition  a function, method or class a citation may name (`PATH:NAME`, `PATH:Class.method`);
;                definitions nest: a method is qualified by its class
;   @name        the definition's own name (left out of its fingerprint, so a rename is "moved")
;   @container   qualifies the definitions inside it but cannot be cited itself (Rust `impl`)
;   @qualifier   a prefix for the name that lives outside the definition (Go receivers)
;   @ignore      what a fingerprint skips: comments and formatting-only tokens

(function_definition name: (identifier) @name) @definition
(class_definition name: (identifier) @name) @definition
; decorators belong to what they decorate (`@cache` added is a change)
(decorated_definition
  definition: [(function_definition name: (identifier) @name)
               (class_definition name: (identifier) @name)]) @definition

(comment) @ignore
(line_continuation) @ignore
