//! Semantic analysis and lowering: resolves names, folds constants, checks types,
//! instantiates generic kernels, rejects recursion and produces a [`kdsl_ir::Module`].
//!
//! Diagnostics are collected in [`Checker::diagnostics`]. A check that fails returns `None`
//! after reporting once; callers that receive `None` report nothing further, so one mistake
//! does not cascade into many messages.

mod attributes;
mod body;
pub mod constant;
mod define;
mod records;
mod suggestions;
mod unroll;

use crate::ast::{self, FunctionKind as AstFunctionKind, Item};
use kdsl_ir::ErrorCode;
use kdsl_ir::{
    AddressSpace, ArrayType, Diagnostic, Function, FunctionId, FunctionKind, Literal, Module,
    ParameterType, ScalarType, Span, Undefined,
};
use std::collections::{HashMap, HashSet};

pub use define::Define;
pub use suggestions::{suggest, Builtin};

/// A resolved source type.
#[derive(Clone, Debug, PartialEq)]
pub enum ResolvedType {
    Scalar(ScalarType),
    Array(ArrayType),
    /// `(T, U, ...)`: at least two scalars. The front end flattens tuples into scalars.
    Tuple(Vec<ScalarType>),
    /// `f32x4` and the like, flattened into components like a tuple.
    Vector(VectorType),
}

/// A vector type such as `f32x4`: 2, 3 or 4 components of one non-`bool` scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorType {
    pub element: ScalarType,
    pub width: u8,
}

impl VectorType {
    /// `f32x4` to `VectorType { F32, 4 }`; `None` for any other name.
    pub fn from_name(name: &str) -> Option<VectorType> {
        let (element, width) = name.rsplit_once('x')?;
        let element = ScalarType::from_name(element).filter(|&t| t != ScalarType::Bool)?;
        let width = match width {
            "2" => 2,
            "3" => 3,
            "4" => 4,
            _ => return None,
        };
        Some(VectorType { element, width })
    }

    /// The component types, for the flattening shared with tuples.
    pub fn components(self) -> Vec<ScalarType> {
        vec![self.element; usize::from(self.width)]
    }
}

impl std::fmt::Display for VectorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.element, self.width)
    }
}

/// What a module-level name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Global {
    Constant(usize),
    Function(usize),
    Instance(usize),
}

#[derive(Clone, Debug, PartialEq)]
enum ConstantState {
    Unvisited,
    InProgress,
    Done(Option<(ScalarType, Literal)>),
}

/// The signature of a device function, as seen by its callers.
#[derive(Clone, Debug)]
pub struct Signature {
    pub id: FunctionId,
    /// The IR parameters: each source parameter flattened, then one hidden `private mut
    /// [T; 1]` array per element of a tuple result.
    pub parameters: Vec<ParameterType>,
    /// The source parameters, in order: each takes one IR parameter, a tuple one per element.
    pub shapes: Vec<ParameterShape>,
    pub return_type: Option<ScalarType>,
    /// The element types of a tuple result (the components of a vector result).
    pub tuple_result: Option<Vec<ScalarType>>,
    /// The type of a vector result, which returns like a tuple of its components.
    pub vector_result: Option<VectorType>,
}

/// How a source parameter maps onto IR parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum ParameterShape {
    Single(ParameterType),
    Tuple(Vec<ScalarType>),
    Vector(VectorType),
    /// A multi-dimensional buffer (`global [[T]]`): the buffer, then `rank` `u32` extents and
    /// `rank` `u64` strides.
    Shaped {
        buffer: ParameterType,
        rank: u8,
    },
}

impl ParameterShape {
    /// The IR parameter types it becomes.
    pub fn flattened(&self) -> Vec<ParameterType> {
        match self {
            ParameterShape::Single(ty) => vec![ty.clone()],
            ParameterShape::Tuple(elements) => elements
                .iter()
                .map(|&ty| ParameterType::Scalar { ty })
                .collect(),
            ParameterShape::Vector(vector) => vector
                .components()
                .into_iter()
                .map(|ty| ParameterType::Scalar { ty })
                .collect(),
            ParameterShape::Shaped { buffer, rank } => std::iter::once(buffer.clone())
                .chain((0..*rank).map(|_| ParameterType::Scalar {
                    ty: ScalarType::U32,
                }))
                .chain((0..*rank).map(|_| ParameterType::Scalar {
                    ty: ScalarType::U64,
                }))
                .collect(),
        }
    }

    /// How many IR parameters it becomes.
    pub fn width(&self) -> usize {
        match self {
            ParameterShape::Single(_) => 1,
            ParameterShape::Tuple(elements) => elements.len(),
            ParameterShape::Vector(vector) => usize::from(vector.width),
            ParameterShape::Shaped { rank, .. } => 1 + 2 * usize::from(*rank),
        }
    }
}

/// A resolved type as written in source: `f32`, `[f32; 4]`, `(u32, f32)`.
pub(crate) fn describe_type(ty: &ResolvedType) -> String {
    match ty {
        ResolvedType::Scalar(ty) => ty.to_string(),
        ResolvedType::Array(array) => array.to_string(),
        ResolvedType::Tuple(elements) => {
            let names: Vec<&str> = elements.iter().map(|t| t.name()).collect();
            format!("({})", names.join(", "))
        }
        ResolvedType::Vector(vector) => vector.to_string(),
    }
}

/// The hidden array through which a function returns element `ty` of its tuple result.
pub(crate) fn tuple_result_parameter(ty: ScalarType) -> ParameterType {
    ParameterType::Array {
        ty: ArrayType {
            element: ty,
            dimensions: vec![1],
        },
        space: AddressSpace::Private,
        writable: true,
    }
}

pub struct Checker<'file> {
    file: &'file ast::SourceFile,
    pub diagnostics: Vec<Diagnostic>,
    /// The code, message and primary span of every reported diagnostic, so that reporting one
    /// twice is noticed in constant time.
    reported: HashSet<(ErrorCode, String, Option<Span>)>,
    globals: HashMap<String, Global>,
    constants: Vec<&'file ast::ConstantItem>,
    constant_states: Vec<ConstantState>,
    functions: Vec<&'file ast::FunctionItem>,
    instances: Vec<&'file ast::InstanceItem>,
    /// Device functions by name, once their signatures are known.
    signatures: HashMap<String, Signature>,
    /// Set while checking a function whose body has syntax errors: names it would have
    /// declared may be missing, so unknown-name errors there are not reported.
    suppress_unknown_names: bool,
    /// The instance being checked, for a note on diagnostics from a generic kernel's body.
    instance_note: Option<(Span, String)>,
    /// Type parameters in scope (generic kernels being instantiated).
    type_arguments: HashMap<String, ScalarType>,
    /// The function body being checked; `None` while evaluating a module constant.
    function: Option<body::FunctionState>,
    /// Set while checking an expression that must be a compile-time constant.
    constant_context: bool,
    /// Compile-time values of module constants (`-D NAME=VALUE`).
    defines: &'file [Define],
    /// The file's record types by name, with the span of the name in their declaration.
    records: HashMap<String, (Box<kdsl_ir::RecordType>, Span)>,
}

impl<'file> Checker<'file> {
    pub fn new(file: &'file ast::SourceFile) -> Self {
        Checker {
            file,
            diagnostics: Vec::new(),
            reported: HashSet::new(),
            globals: HashMap::new(),
            constants: Vec::new(),
            constant_states: Vec::new(),
            functions: Vec::new(),
            instances: Vec::new(),
            signatures: HashMap::new(),
            suppress_unknown_names: false,
            instance_note: None,
            type_arguments: HashMap::new(),
            function: None,
            constant_context: false,
            defines: &[],
            records: HashMap::new(),
        }
    }

    /// Reports an error, with a note naming the instance when inside a generic kernel.
    pub(crate) fn report(&mut self, mut diagnostic: Diagnostic) {
        if let Some((span, name)) = &self.instance_note {
            diagnostic =
                diagnostic.with_label(*span, format!("in the instance `{name}` created here"));
        }
        let key = (
            diagnostic.code,
            diagnostic.message.clone(),
            diagnostic.primary_span(),
        );
        if self.reported.insert(key) {
            self.diagnostics.push(diagnostic);
        }
    }

    /// Checks the whole file and lowers it. The module is meaningful only when no error was
    /// reported.
    pub fn check(mut self) -> (Module, Vec<Diagnostic>) {
        let has_item_errors = self.file.items.iter().any(|i| matches!(i, Item::Error(_)));
        self.collect_items();
        self.declare_records();
        self.check_define_names();
        for index in 0..self.constants.len() {
            self.constant_value(index);
        }
        let device_order = self.order_device_functions();
        self.suppress_unknown_names = has_item_errors;
        let mut module = Module::default();
        for (position, &index) in device_order.iter().enumerate() {
            let item = self.functions[index];
            if let Some(signature) = self.device_signature(item, FunctionId(position as u32)) {
                self.signatures.insert(item.name.name.clone(), signature);
            }
        }
        for &index in &device_order {
            let item = self.functions[index];
            if let Some(function) = self.check_function(item, &item.name.name) {
                module.functions.push(function);
            }
        }
        // Kernels and instances, in source order.
        for item in &self.file.items {
            match item {
                Item::Function(function)
                    if function.kind == AstFunctionKind::Kernel
                        && function.type_parameters.is_empty() =>
                {
                    if let Some(lowered) = self.check_function(function, &function.name.name) {
                        push_kernel(&mut module, lowered);
                    }
                }
                Item::Instance(instance) => {
                    if let Some(lowered) = self.check_instance(instance) {
                        push_kernel(&mut module, lowered);
                    }
                }
                _ => {}
            }
        }
        module.constants = self.folded_constants();
        kdsl_ir::ids::number_module(&mut module);
        (module, self.diagnostics)
    }

    fn collect_items(&mut self) {
        let file = self.file;
        for item in &file.items {
            let (name, global) = match item {
                Item::Constant(constant) => {
                    self.constants.push(constant);
                    self.constant_states.push(ConstantState::Unvisited);
                    (&constant.name, Global::Constant(self.constants.len() - 1))
                }
                Item::Function(function) => {
                    self.functions.push(function);
                    (&function.name, Global::Function(self.functions.len() - 1))
                }
                Item::Instance(instance) => {
                    self.instances.push(instance);
                    (&instance.alias, Global::Instance(self.instances.len() - 1))
                }
                Item::Error(_) | Item::Record(_) => continue,
            };
            if !matches!(global, Global::Constant(_)) && Builtin::from_name(&name.name).is_some() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0204,
                        format!("`{}` is the name of a built-in function", name.name),
                        name.span,
                        "this definition would hide the built-in",
                    )
                    .with_hint("choose another name"),
                );
                continue;
            }
            if let Some(previous) = self.globals.get(&name.name) {
                let previous_span = self.global_name_span(*previous);
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0204,
                        format!("`{}` is defined more than once", name.name),
                        name.span,
                        "redefined here",
                    )
                    .with_label(previous_span, "first defined here")
                    .with_hint("rename one of the definitions"),
                );
                continue;
            }
            self.globals.insert(name.name.clone(), global);
        }
        for function in self.functions.clone() {
            for (index, parameter) in function.type_parameters.iter().enumerate() {
                let earlier = function.type_parameters[..index]
                    .iter()
                    .find(|p| p.name == parameter.name);
                if let Some(earlier) = earlier {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0204,
                            format!(
                                "type parameter `{}` is defined more than once",
                                parameter.name
                            ),
                            parameter.span,
                            "redefined here",
                        )
                        .with_label(earlier.span, "first defined here")
                        .with_hint("give each type parameter its own name"),
                    );
                }
            }
            if function.kind == AstFunctionKind::Device && !function.type_parameters.is_empty() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0208,
                        "generic device functions are not supported",
                        function.type_parameters[0].span,
                        "type parameters are allowed on kernels only",
                    )
                    .with_hint("write one function per type, or make this a generic kernel"),
                );
            }
            if function.kind == AstFunctionKind::Kernel {
                if let Some(return_type) = &function.return_type {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0506,
                            format!("kernel `{}` declares a return type", function.name.name),
                            return_type.span(),
                            "kernels return nothing",
                        )
                        .with_hint("remove `-> ...` and write results to a `global mut` buffer"),
                    );
                }
            }
        }
    }

    fn global_name_span(&self, global: Global) -> Span {
        match global {
            Global::Constant(i) => self.constants[i].name.span,
            Global::Function(i) => self.functions[i].name.span,
            Global::Instance(i) => self.instances[i].alias.span,
        }
    }

    /// Resolves a type written in source.
    pub(crate) fn resolve_type(&mut self, ty: &ast::TypeExpression) -> Option<ResolvedType> {
        match ty {
            ast::TypeExpression::Named(name) => {
                if let Some(ty) = self.type_arguments.get(&name.name) {
                    return Some(ResolvedType::Scalar(*ty));
                }
                if let Some(ty) = ScalarType::from_name(&name.name) {
                    return Some(ResolvedType::Scalar(ty));
                }
                if let Some(vector) = VectorType::from_name(&name.name) {
                    return Some(ResolvedType::Vector(vector));
                }
                if self.record_type_misused(name) {
                    return None;
                }
                let candidates: Vec<&str> = ScalarType::ALL
                    .iter()
                    .map(|t| t.name())
                    .chain(self.type_arguments.keys().map(String::as_str))
                    .collect();
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0203,
                    format!("unknown type `{}`", name.name),
                    name.span,
                    "not a type",
                );
                let best = suggest(&name.name, candidates)
                    .map(str::to_string)
                    .or_else(|| self.suggest_record(&name.name));
                if let Some(best) = best {
                    diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
                }
                self.report(diagnostic);
                None
            }
            ast::TypeExpression::Array {
                element,
                length,
                span,
            } => {
                let element = self.resolve_type(element);
                let length = self.array_length(length);
                let (element, length) = (element?, length?);
                let mut dimensions = vec![length];
                let scalar = match element {
                    ResolvedType::Scalar(ty) => ty,
                    ResolvedType::Array(inner) => {
                        dimensions.extend(inner.dimensions);
                        inner.element
                    }
                    tuple @ ResolvedType::Tuple(_) => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0314,
                                format!(
                                    "array elements must be scalars, not `{}`",
                                    describe_type(&tuple)
                                ),
                                *span,
                                "arrays of tuples are not supported",
                            )
                            .with_hint("use one array per tuple element"),
                        );
                        return None;
                    }
                    ResolvedType::Vector(vector) => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0315,
                                format!("array elements must be scalars, not `{vector}`"),
                                *span,
                                "arrays of vectors are not supported",
                            )
                            .with_hint(format!(
                                "use an array of `{}` and `vload{}`/`vstore{}` on buffers",
                                vector.element, vector.width, vector.width
                            )),
                        );
                        return None;
                    }
                };
                let array = ArrayType {
                    element: scalar,
                    dimensions,
                };
                if array.element_count() > (1 << 28) {
                    self.report(Diagnostic::error(
                        ErrorCode::E0502,
                        format!("array `{array}` is too large"),
                        *span,
                        "more than 2^28 elements",
                    ));
                    return None;
                }
                Some(ResolvedType::Array(array))
            }
            ast::TypeExpression::Tuple { elements, span } => {
                let mut scalars = Vec::with_capacity(elements.len());
                for element in elements {
                    match self.resolve_type(element)? {
                        ResolvedType::Scalar(ty) => scalars.push(ty),
                        other => {
                            self.report(Diagnostic::error(
                                ErrorCode::E0314,
                                format!(
                                    "tuple elements must be scalars, not `{}`",
                                    describe_type(&other)
                                ),
                                element.span(),
                                "not a scalar",
                            ));
                            return None;
                        }
                    }
                }
                if scalars.len() < 2 {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0314,
                            "a tuple type needs at least two elements",
                            *span,
                            "too few elements",
                        )
                        .with_hint("write the scalar type itself, such as `f32`"),
                    );
                    return None;
                }
                Some(ResolvedType::Tuple(scalars))
            }
        }
    }

    /// Resolves the type of a value: a scalar, or an error naming `what`.
    pub(crate) fn resolve_scalar_type(
        &mut self,
        ty: &ast::TypeExpression,
        what: &str,
    ) -> Option<ScalarType> {
        match self.resolve_type(ty)? {
            ResolvedType::Scalar(scalar) => Some(scalar),
            ResolvedType::Array(array) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0301,
                    format!("{what} must have a scalar type, not `{array}`"),
                    ty.span(),
                    "array type not allowed here",
                ));
                None
            }
            tuple @ ResolvedType::Tuple(_) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0314,
                    format!(
                        "{what} must have a scalar type, not `{}`",
                        describe_type(&tuple)
                    ),
                    ty.span(),
                    "tuple type not allowed here",
                ));
                None
            }
            ResolvedType::Vector(vector) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0315,
                    format!("{what} must have a scalar type, not `{vector}`"),
                    ty.span(),
                    "vector type not allowed here",
                ));
                None
            }
        }
    }

    /// The IR type of a buffer parameter `space [mut] [element]`.
    fn resolve_buffer(
        &mut self,
        space: ast::BufferSpace,
        writable: bool,
        element: &ast::TypeExpression,
        span: Span,
    ) -> Option<ParameterType> {
        let record = self.record_element(element);
        let element = match record {
            Some(_) => ScalarType::U8,
            None => self.resolve_scalar_type(element, "a buffer element")?,
        };
        let space = match space {
            ast::BufferSpace::Global => AddressSpace::Global,
            ast::BufferSpace::Constant => AddressSpace::Constant,
            ast::BufferSpace::Local => AddressSpace::Local,
            ast::BufferSpace::Private => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0301,
                        "private memory cannot be sized at launch",
                        span,
                        "`private [T]` has no length",
                    )
                    .with_hint(
                        "give the length (`private mut [T; N]`, device functions only), or take work-group memory sized at launch: `local mut [T]`",
                    ),
                );
                return None;
            }
        };
        if space == AddressSpace::Local && record.is_some() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0301,
                    "records in local memory sized at launch are not supported",
                    span,
                    "a launch-sized local array of records",
                )
                .with_hint(
                    "use one launch-sized local array per field, such as `starts: local mut [i32]`",
                ),
            );
            return None;
        }
        if space == AddressSpace::Constant && writable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0402,
                    "`constant` buffers are read-only",
                    span,
                    "`constant mut` is not allowed",
                )
                .with_hint("use `global mut [T]` for a writable buffer"),
            );
            return None;
        }
        if element == ScalarType::Bool {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0301,
                    "buffers of `bool` are not supported",
                    span,
                    "`bool` has no defined size on the host",
                )
                .with_hint("use a buffer of `u8`"),
            );
            return None;
        }
        Some(ParameterType::Buffer {
            element,
            space,
            writable,
            record,
        })
    }

    fn resolve_parameter(
        &mut self,
        parameter: &ast::Parameter,
        kernel: bool,
    ) -> Option<ParameterShape> {
        match &parameter.ty {
            ast::ParameterTypeExpression::Value(ty) => {
                match (self.resolve_type(ty), kernel) {
                    (Some(ResolvedType::Tuple(elements)), false) => {
                        return Some(ParameterShape::Tuple(elements));
                    }
                    (Some(ResolvedType::Vector(vector)), false) => {
                        return Some(ParameterShape::Vector(vector));
                    }
                    _ => {}
                }
                let scalar = self.resolve_scalar_type(ty, "a parameter passed by value");
                if scalar.is_none() && kernel && matches!(ty, ast::TypeExpression::Tuple { .. }) {
                    if let Some(last) = self.diagnostics.last_mut() {
                        last.hints.push(
                            "kernels take scalars and buffers: pass each element as a parameter"
                                .into(),
                        );
                    }
                }
                if scalar.is_none() && matches!(ty, ast::TypeExpression::Array { .. }) {
                    if let Some(last) = self.diagnostics.last_mut() {
                        last.hints.push(
                            "pass arrays as buffers (`global [T]`, `global mut [T]`) or, to a device function, by reference (`local [T; N]`, `private mut [T; N]`)".into(),
                        );
                    }
                }
                let scalar = scalar?;
                if kernel && scalar == ScalarType::Bool {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0301,
                            "kernel parameters cannot have type `bool`",
                            ty.span(),
                            "`bool` has no defined size on the host",
                        )
                        .with_hint("pass a `u32` and compare it with 0"),
                    );
                    return None;
                }
                Some(ParameterShape::Single(ParameterType::Scalar { ty: scalar }))
            }
            ast::ParameterTypeExpression::ShapedBuffer {
                space,
                writable,
                element,
                rank,
                span,
            } => {
                let buffer = self.resolve_buffer(*space, *writable, element, *span)?;
                if matches!(
                    &buffer,
                    ParameterType::Buffer {
                        record: Some(_),
                        ..
                    }
                ) {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0301,
                            "multi-dimensional buffers of records are not supported",
                            *span,
                            "a record element type",
                        )
                        .with_hint("pass the records as a flat buffer (`global [Node]`) and index it with `row * n + col`"),
                    );
                    return None;
                }
                Some(ParameterShape::Shaped {
                    buffer,
                    rank: *rank,
                })
            }
            ast::ParameterTypeExpression::Buffer {
                space,
                writable,
                element,
                span,
            } => self
                .resolve_buffer(*space, *writable, element, *span)
                .map(ParameterShape::Single),
            ast::ParameterTypeExpression::Array {
                space,
                writable,
                ty,
                span,
            } => {
                let space = match space {
                    ast::ArraySpace::Local => AddressSpace::Local,
                    ast::ArraySpace::Private => AddressSpace::Private,
                };
                if kernel {
                    let mut diagnostic = Diagnostic::error(
                        ErrorCode::E0301,
                        format!(
                            "kernel parameter `{}` cannot be a {space} array",
                            parameter.name.name
                        ),
                        *span,
                        "kernels take scalars and buffers",
                    )
                    .with_hint(
                        "declare the array inside the kernel and pass it to device functions",
                    );
                    if space == AddressSpace::Local {
                        diagnostic = diagnostic.with_hint(format!(
                            "or take local memory whose length the launch gives: `{}: local mut [T]`",
                            parameter.name.name
                        ));
                    }
                    self.report(diagnostic);
                    return None;
                }
                match self.resolve_type(ty)? {
                    ResolvedType::Array(array) => {
                        Some(ParameterShape::Single(ParameterType::Array {
                            ty: array,
                            space,
                            writable: *writable,
                        }))
                    }
                    other => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0301,
                                format!(
                                    "a {space} parameter must have an array type, not `{}`",
                                    describe_type(&other)
                                ),
                                ty.span(),
                                "not an array type",
                            )
                            .with_hint(format!("write `{space} [T; N]`")),
                        );
                        None
                    }
                }
            }
        }
    }

    fn device_signature(&mut self, item: &ast::FunctionItem, id: FunctionId) -> Option<Signature> {
        let mut shapes = Vec::new();
        let mut ok = true;
        for parameter in &item.parameters {
            match self.resolve_parameter(parameter, false) {
                Some(shape) => shapes.push(shape),
                None => ok = false,
            }
        }
        let (return_type, tuple_result, vector_result) = self.resolve_result(item)?;
        let mut parameters: Vec<ParameterType> =
            shapes.iter().flat_map(ParameterShape::flattened).collect();
        if let Some(elements) = &tuple_result {
            parameters.extend(elements.iter().map(|&ty| tuple_result_parameter(ty)));
        }
        ok.then_some(Signature {
            id,
            parameters,
            shapes,
            return_type,
            tuple_result,
            vector_result,
        })
    }

    /// A device function's result: a scalar, a tuple (a vector returns as the tuple of its
    /// components), or nothing (also for kernels, which report a result type elsewhere).
    /// `None` when the type does not resolve.
    #[allow(clippy::type_complexity)]
    pub(crate) fn resolve_result(
        &mut self,
        item: &ast::FunctionItem,
    ) -> Option<(
        Option<ScalarType>,
        Option<Vec<ScalarType>>,
        Option<VectorType>,
    )> {
        match (&item.return_type, item.kind) {
            (Some(ty), AstFunctionKind::Device) => match self.resolve_type(ty)? {
                ResolvedType::Tuple(elements) => Some((None, Some(elements), None)),
                ResolvedType::Vector(vector) => {
                    Some((None, Some(vector.components()), Some(vector)))
                }
                _ => Some((
                    Some(self.resolve_scalar_type(ty, "a function result")?),
                    None,
                    None,
                )),
            },
            _ => Some((None, None, None)),
        }
    }

    fn check_instance(&mut self, instance: &ast::InstanceItem) -> Option<Function> {
        let generic = match self.globals.get(&instance.generic.name) {
            Some(Global::Function(index)) => self.functions[*index],
            Some(_) | None => {
                let candidates: Vec<&str> = self
                    .functions
                    .iter()
                    .filter(|f| !f.type_parameters.is_empty())
                    .map(|f| f.name.name.as_str())
                    .collect();
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0208,
                    format!("`{}` is not a generic kernel", instance.generic.name),
                    instance.generic.span,
                    "expected the name of a generic kernel",
                );
                if let Some(best) = suggest(&instance.generic.name, candidates) {
                    diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
                }
                self.report(diagnostic);
                return None;
            }
        };
        if generic.kind != AstFunctionKind::Kernel || generic.type_parameters.is_empty() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0208,
                    format!("`{}` is not a generic kernel", instance.generic.name),
                    instance.generic.span,
                    "only kernels with type parameters can be instantiated",
                )
                .with_label(generic.name.span, "defined here"),
            );
            return None;
        }
        if generic.type_parameters.len() != instance.type_arguments.len() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0208,
                    format!(
                        "`{}` takes {} type argument(s) but {} were given",
                        generic.name.name,
                        generic.type_parameters.len(),
                        instance.type_arguments.len()
                    ),
                    instance.span,
                    "wrong number of type arguments",
                )
                .with_label(generic.name.span, "defined here"),
            );
            return None;
        }
        let mut arguments = HashMap::new();
        for (parameter, argument) in generic.type_parameters.iter().zip(&instance.type_arguments) {
            let ty = self.resolve_scalar_type(argument, "a type argument")?;
            arguments.insert(parameter.name.clone(), ty);
        }
        self.type_arguments = arguments;
        self.instance_note = Some((instance.span, instance.alias.name.clone()));
        let function = self.check_function(generic, &instance.alias.name);
        self.instance_note = None;
        self.type_arguments.clear();
        function
    }

    /// Returns the value of constant `index`, evaluating it (and the constants it uses) once.
    fn constant_value(&mut self, index: usize) -> Option<(ScalarType, Literal)> {
        match &self.constant_states[index] {
            ConstantState::Done(value) => return *value,
            ConstantState::InProgress => {
                let item = self.constants[index];
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0509,
                        format!("constant `{}` depends on itself", item.name.name),
                        item.value.span,
                        "this initializer uses the constant being defined",
                    )
                    .with_label(item.name.span, "constant defined here"),
                );
                self.constant_states[index] = ConstantState::Done(None);
                return None;
            }
            ConstantState::Unvisited => {}
        }
        self.constant_states[index] = ConstantState::InProgress;
        let item = self.constants[index];
        // Constants never see type parameters or the function being checked.
        let saved_function = self.function.take();
        let saved_types = std::mem::take(&mut self.type_arguments);
        let saved_note = self.instance_note.take();
        let saved_context = std::mem::replace(&mut self.constant_context, true);
        let value = self.evaluate_constant_item(item);
        self.constant_context = saved_context;
        self.function = saved_function;
        self.type_arguments = saved_types;
        self.instance_note = saved_note;
        if matches!(self.constant_states[index], ConstantState::InProgress) {
            self.constant_states[index] = ConstantState::Done(value);
        }
        match &self.constant_states[index] {
            ConstantState::Done(value) => *value,
            _ => None,
        }
    }

    fn evaluate_constant_item(
        &mut self,
        item: &ast::ConstantItem,
    ) -> Option<(ScalarType, Literal)> {
        let ty = self.resolve_scalar_type(&item.ty, "a constant");
        if let Some(define) = self.define_for(item) {
            return self.defined_value(item, ty?, define);
        }
        let value = self.constant_expression(&item.value, ty)?;
        let ty = ty?;
        if value.0 != ty {
            self.mismatch(ty, value.0, item.value.span, "constant initializer");
            return None;
        }
        Some(value)
    }

    /// Checks and evaluates an expression that must be a compile-time constant.
    pub(crate) fn constant_expression(
        &mut self,
        expression: &ast::Expression,
        expected: Option<ScalarType>,
    ) -> Option<(ScalarType, Literal)> {
        let saved_context = std::mem::replace(&mut self.constant_context, true);
        let typed = self.expression(expression, expected);
        self.constant_context = saved_context;
        let typed = typed?;
        match constant::evaluate(&typed) {
            Ok(value) => Some((typed.ty, value.to_literal())),
            Err(constant::ConstantError::NotConstant(span)) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0509,
                        "expected a constant expression",
                        span,
                        "not known at compile time",
                    )
                    .with_hint("use literals, `const` items, operators and casts"),
                );
                None
            }
            Err(constant::ConstantError::Undefined(span, undefined)) => {
                let (message, label) = match undefined {
                    Undefined::DivisionByZero { .. } => (
                        "division by zero in a constant expression",
                        "divides by zero",
                    ),
                    Undefined::DivisionOverflow { .. } => (
                        "signed division overflow in a constant expression",
                        "the smallest value divided by -1",
                    ),
                    // Reported as E0516 before evaluation gets here.
                    Undefined::Overflow { .. } => (
                        "integer overflow in a constant expression",
                        "does not fit in its type",
                    ),
                };
                self.report(Diagnostic::error(ErrorCode::E0510, message, span, label));
                None
            }
            Err(constant::ConstantError::Overflow(span, what)) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0516,
                        "arithmetic overflow in a constant expression",
                        span,
                        what,
                    )
                    .with_hint(
                        "use a wider type, or `wrapping_add`, `wrapping_sub` or `wrapping_mul` to wrap on purpose",
                    ),
                );
                None
            }
        }
    }

    /// The length of an array dimension: a positive constant that fits in `u32`.
    fn array_length(&mut self, length: &ast::Expression) -> Option<u32> {
        let (ty, value) = self.constant_expression(length, Some(ScalarType::U32))?;
        let number = match value {
            Literal::Integer(bits) if ty.is_integer() => constant::sign_extend(bits, ty),
            _ => {
                self.report(Diagnostic::error(
                    ErrorCode::E0502,
                    format!("array length must be an integer, found `{ty}`"),
                    length.span,
                    "not an integer",
                ));
                return None;
            }
        };
        if number <= 0 || number > i128::from(u32::MAX) {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0502,
                    format!(
                        "array length must be between 1 and {}, found {number}",
                        u32::MAX
                    ),
                    length.span,
                    "invalid length",
                )
                .with_hint("arrays need at least one element"),
            );
            return None;
        }
        Some(number as u32)
    }

    /// Orders device functions callees first and reports recursion.
    fn order_device_functions(&mut self) -> Vec<usize> {
        let device: Vec<usize> = (0..self.functions.len())
            .filter(|&i| {
                self.functions[i].kind == AstFunctionKind::Device
                    && self.functions[i].type_parameters.is_empty()
                    && self.globals.get(&self.functions[i].name.name) == Some(&Global::Function(i))
            })
            .collect();
        let mut calls: HashMap<usize, Vec<(usize, Span)>> = HashMap::new();
        for &index in &device {
            let mut found = Vec::new();
            collect_calls_in_block(&self.functions[index].body, &mut found);
            let mut callees = Vec::new();
            for (name, span) in found {
                if let Some(Global::Function(callee)) = self.globals.get(&name) {
                    if self.functions[*callee].kind == AstFunctionKind::Device {
                        callees.push((*callee, span));
                    }
                }
            }
            calls.insert(index, callees);
        }
        // Depth-first search; a back edge to a function on the stack is a cycle.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Active,
            Finished,
        }
        let mut marks: HashMap<usize, Mark> = device.iter().map(|&i| (i, Mark::New)).collect();
        let mut order = Vec::new();
        let mut cycles: Vec<Vec<(usize, Span)>> = Vec::new();
        for &root in &device {
            if marks[&root] != Mark::New {
                continue;
            }
            // Iterative DFS: the stack holds (function, next callee position, call span into it).
            let mut stack: Vec<(usize, usize, Span)> = vec![(root, 0, Span::default())];
            marks.insert(root, Mark::Active);
            while let Some(&mut (function, ref mut next, _)) = stack.last_mut() {
                let callees = &calls[&function];
                if *next < callees.len() {
                    let (callee, span) = callees[*next];
                    *next += 1;
                    match marks[&callee] {
                        Mark::New => {
                            marks.insert(callee, Mark::Active);
                            stack.push((callee, 0, span));
                        }
                        Mark::Active => {
                            let start =
                                stack.iter().position(|(f, _, _)| *f == callee).unwrap_or(0);
                            // The cycle: each function with the call that leads to the next.
                            let mut cycle: Vec<(usize, Span)> = Vec::new();
                            for position in start..stack.len() {
                                let call = if position + 1 < stack.len() {
                                    stack[position + 1].2
                                } else {
                                    span
                                };
                                cycle.push((stack[position].0, call));
                            }
                            cycles.push(cycle);
                        }
                        Mark::Finished => {}
                    }
                } else {
                    marks.insert(function, Mark::Finished);
                    order.push(function);
                    stack.pop();
                }
            }
        }
        for cycle in cycles {
            let names: Vec<String> = cycle
                .iter()
                .map(|(f, _)| format!("`{}`", self.functions[*f].name.name))
                .collect();
            let first = self.functions[cycle[0].0];
            let message = if cycle.len() == 1 {
                format!("function `{}` calls itself", first.name.name)
            } else {
                format!(
                    "functions call each other in a cycle: {} -> {}",
                    names.join(" -> "),
                    names[0]
                )
            };
            let mut diagnostic = Diagnostic::error(
                ErrorCode::E0508,
                message,
                first.name.span,
                "recursion is not allowed",
            );
            for (function, call) in &cycle {
                diagnostic = diagnostic.with_label(
                    *call,
                    format!("`{}` makes this call", self.functions[*function].name.name),
                );
            }
            self.report(
                diagnostic
                    .with_hint("GPU kernels have no call stack: rewrite the recursion as a loop"),
            );
        }
        order
    }
}

/// Appends a kernel, followed by its contiguous copy where it has multi-dimensional buffers
/// (`body::shaped::contiguous_copy`), the two naming each other.
fn push_kernel(module: &mut Module, mut kernel: Function) {
    let id = FunctionId(module.functions.len() as u32);
    match body::shaped::contiguous_copy(&kernel) {
        Some(mut copy) => {
            kernel.contiguous_entry = Some(FunctionId(id.0 + 1));
            copy.contiguous_copy_of = Some(id);
            module.functions.push(kernel);
            module.functions.push(copy);
        }
        None => module.functions.push(kernel),
    }
}

fn collect_calls_in_block(block: &ast::Block, found: &mut Vec<(String, Span)>) {
    for statement in &block.statements {
        collect_calls_in_statement(statement, found);
    }
}

fn collect_calls_in_statement(statement: &ast::Statement, found: &mut Vec<(String, Span)>) {
    use ast::StatementKind as S;
    match &statement.kind {
        S::Let { value, .. } => {
            if let Some(value) = value {
                collect_calls(value, found);
            }
        }
        S::LetTuple { value, .. } => collect_calls(value, found),
        S::Local { .. } | S::Break | S::Continue | S::Error => {}
        S::Assign { target, value, .. } => {
            collect_calls(target, found);
            collect_calls(value, found);
        }
        S::If {
            condition,
            accept,
            reject,
        } => {
            collect_calls(condition, found);
            collect_calls_in_block(accept, found);
            if let Some(reject) = reject {
                collect_calls_in_block(reject, found);
            }
        }
        S::While { condition, body } => {
            collect_calls(condition, found);
            collect_calls_in_block(body, found);
        }
        S::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            collect_calls(start, found);
            collect_calls(end, found);
            if let Some(step) = step {
                collect_calls(step, found);
            }
            collect_calls_in_block(body, found);
        }
        S::Return(value) => {
            if let Some(value) = value {
                collect_calls(value, found);
            }
        }
        S::Block(block) => collect_calls_in_block(block, found),
        S::Expression(value) => collect_calls(value, found),
    }
}

fn collect_calls(expression: &ast::Expression, found: &mut Vec<(String, Span)>) {
    use ast::ExpressionKind as E;
    match &expression.kind {
        E::Literal(_) | E::String(_) | E::Name(_) | E::AssociatedConstant { .. } | E::Error => {}
        E::Unary { operand, .. } => collect_calls(operand, found),
        E::Binary { left, right, .. } => {
            collect_calls(left, found);
            collect_calls(right, found);
        }
        E::Cast { value, .. } => collect_calls(value, found),
        E::If {
            condition,
            accept,
            reject,
        } => {
            collect_calls(condition, found);
            collect_calls(accept, found);
            collect_calls(reject, found);
        }
        E::Index { base, index } => {
            collect_calls(base, found);
            collect_calls(index, found);
        }
        E::Call { callee, arguments } => {
            found.push((callee.name.clone(), expression.span));
            for argument in arguments {
                collect_calls(argument, found);
            }
        }
        E::Parenthesized(inner) | E::Field { base: inner, .. } => collect_calls(inner, found),
        E::MethodCall {
            base, arguments, ..
        } => {
            collect_calls(base, found);
            for argument in arguments {
                collect_calls(argument, found);
            }
        }
        E::Tuple(elements) => {
            for element in elements {
                collect_calls(element, found);
            }
        }
        E::RecordLiteral { fields, .. } => {
            for (_, value) in fields {
                collect_calls(value, found);
            }
        }
    }
}

/// Whether a statement list contains a recovered syntax error anywhere.
pub(crate) fn block_has_errors(block: &ast::Block) -> bool {
    block.statements.iter().any(|s| match &s.kind {
        ast::StatementKind::Error => true,
        ast::StatementKind::If { accept, reject, .. } => {
            block_has_errors(accept) || reject.as_ref().is_some_and(block_has_errors)
        }
        ast::StatementKind::While { body, .. } | ast::StatementKind::For { body, .. } => {
            block_has_errors(body)
        }
        ast::StatementKind::Block(block) => block_has_errors(block),
        _ => false,
    })
}

pub(crate) fn ir_kind(kind: AstFunctionKind) -> FunctionKind {
    match kind {
        AstFunctionKind::Kernel => FunctionKind::Kernel,
        AstFunctionKind::Device => FunctionKind::Device,
    }
}
