; JavaScript (capture names: see python.symbols.scm).

(function_declaration name: (identifier) @name) @definition
(generator_function_declaration name: (identifier) @name) @definition
(class_declaration name: (identifier) @name) @definition
(method_definition name: (_) @name) @definition
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function) (class)]) @definition

(comment) @ignore
