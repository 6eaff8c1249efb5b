; TypeScript and TSX (capture names: see python.symbols.scm). Overloads share a name:
; a citation of that name covers every declaration with it.

(function_declaration name: (identifier) @name) @definition
(generator_function_declaration name: (identifier) @name) @definition
(function_signature name: (identifier) @name) @definition
(class_declaration name: (type_identifier) @name) @definition
(abstract_class_declaration name: (type_identifier) @name) @definition
(interface_declaration name: (type_identifier) @name) @definition
(enum_declaration name: (identifier) @name) @definition
(type_alias_declaration name: (type_identifier) @name) @definition
(method_definition name: (_) @name) @definition
(method_signature name: (_) @name) @definition
(abstract_method_signature name: (_) @name) @definition
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function) (class)]) @definition

(comment) @ignore
