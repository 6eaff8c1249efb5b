; Java (capture names: see python.symbols.scm). Overloads share a name: a citation of
; `Class.method` covers every overload.

(class_declaration name: (identifier) @name) @definition
(interface_declaration name: (identifier) @name) @definition
(enum_declaration name: (identifier) @name) @definition
(record_declaration name: (identifier) @name) @definition
(annotation_type_declaration name: (identifier) @name) @definition
(method_declaration name: (identifier) @name) @definition
(constructor_declaration name: (identifier) @name) @definition

(line_comment) @ignore
(block_comment) @ignore
