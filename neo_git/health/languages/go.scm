; Go (see python.scm for the capture names).

(function_declaration) @function
(method_declaration) @function
(func_literal) @scope

(if_statement) @nest
(for_statement) @nest
(expression_switch_statement) @nest
(type_switch_statement) @nest
(select_statement) @nest
(if_statement alternative: (if_statement) @else_if)

(import_spec path: (_) @import.import)
(package_clause (package_identifier) @package)
