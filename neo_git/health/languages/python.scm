; Python: what the health metrics need, captured in one query pass.
; Capture names are the contract with neo_git/health/metrics.py:
;   @function  counted and starts its own nesting count
;   @scope     starts its own nesting count, not counted (lambda, class body)
;   @nest      one level of control-flow nesting
;   @else_if   a @nest node that only continues a chain: adds no level
;   @import    handed to the language's import reader (languages/<lang>.py)
;   @import.<kind>  a string literal naming an import of that kind (JS/TS, Go)
;   @package   the file's package name (Go, Java)

(function_definition) @function
(lambda) @scope
(class_definition) @scope

(if_statement) @nest
(for_statement) @nest
(while_statement) @nest
(try_statement) @nest
(with_statement) @nest
(match_statement) @nest

; `elif` is an elif_clause inside the if_statement, so it never deepens.
; `else:` whose block holds nothing but an `if` is the same chain written out
; (Python's own ast cannot tell it from `elif`), so it does not deepen either;
; comments around that `if` do not change this.
(if_statement
  alternative: (else_clause
    body: (block . (comment)* . (if_statement) @else_if . (comment)* .)))

(import_statement) @import
(import_from_statement) @import
; `if TYPE_CHECKING:` is recognised by python.py, and only in files that mention it:
; as a query pattern it would cost every file ~10% of the parse time.
