; TypeScript and TSX (see python.scm for the capture names).
; Same shape as javascript.scm; class fields are public_field_definition here.

(function_declaration) @function
(generator_function_declaration) @function
(method_definition) @function
(variable_declarator
  value: [(arrow_function) (function_expression) (generator_function)] @function)
(assignment_expression
  right: [(arrow_function) (function_expression) (generator_function)] @function)
(public_field_definition
  value: [(arrow_function) (function_expression) (generator_function)] @function)
; `export default function () {}` is the module's default-exported function.
(export_statement
  value: [(arrow_function) (function_expression) (generator_function)] @function)

(arrow_function) @scope
(function_expression) @scope
(generator_function) @scope
(class_body) @scope

(if_statement) @nest
(for_statement) @nest
(for_in_statement) @nest
(while_statement) @nest
(do_statement) @nest
(try_statement) @nest
(switch_statement) @nest
(else_clause (if_statement) @else_if)

; `import type … from "x"` is an import_statement too.
(import_statement source: (string) @import.import)
(export_statement source: (string) @import.export)
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string) @import.require .)
  (#eq? @_require "require"))
(call_expression
  function: (import)
  arguments: (arguments . (string) @import.dynamic))
