; Rust (see python.scm for the capture names).

(function_item) @function
(closure_expression) @scope

; `if let` / `while let` are if_expression / while_expression with a let_condition.
(if_expression) @nest
(for_expression) @nest
(while_expression) @nest
(loop_expression) @nest
(match_expression) @nest
(else_clause (if_expression) @else_if)

(use_declaration) @import
; Only `mod foo;` names another file; `mod foo { … }` is inline.
(mod_item !body) @import
