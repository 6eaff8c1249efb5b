; Java (see python.scm for the capture names).

; Interface and abstract methods without a body are declarations, not functions
; (like Rust trait signatures and TypeScript method signatures).
(method_declaration body: (_)) @function
(constructor_declaration) @function
(compact_constructor_declaration) @function
(lambda_expression) @scope
(class_body) @scope

(if_statement) @nest
(for_statement) @nest
(enhanced_for_statement) @nest
(while_statement) @nest
(do_statement) @nest
(try_statement) @nest
(try_with_resources_statement) @nest
(switch_expression) @nest
(if_statement alternative: (if_statement) @else_if)

(import_declaration) @import
(package_declaration [(scoped_identifier) (identifier)] @package)
