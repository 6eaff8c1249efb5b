; Rust (capture names: see python.symbols.scm). Methods are named `Type.method` after their
; `impl` (or `Trait.method` inside a trait); an `impl` block itself cannot be cited.

(function_item name: (identifier) @name) @definition
(function_signature_item name: (identifier) @name) @definition
(struct_item name: (type_identifier) @name) @definition
(enum_item name: (type_identifier) @name) @definition
(union_item name: (type_identifier) @name) @definition
(trait_item name: (type_identifier) @name) @definition
(mod_item name: (identifier) @name) @definition
(macro_definition name: (identifier) @name) @definition
(impl_item
  type: [(type_identifier) @name
         (generic_type type: (type_identifier) @name)
         (scoped_type_identifier name: (type_identifier) @name)
         (generic_type type: (scoped_type_identifier name: (type_identifier) @name))]) @container

(line_comment) @ignore
(block_comment) @ignore
