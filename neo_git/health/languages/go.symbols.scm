; Go (capture names: see python.symbols.scm). A method is named `Type.Method` after its receiver.

(function_declaration name: (identifier) @name) @definition
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [(type_identifier) @qualifier
             (pointer_type (type_identifier) @qualifier)
             (generic_type type: (type_identifier) @qualifier)
             (pointer_type (generic_type type: (type_identifier) @qualifier))]))
  name: (field_identifier) @name) @definition
(type_spec name: (type_identifier) @name) @definition

(comment) @ignore
