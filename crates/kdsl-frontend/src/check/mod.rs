//! Semantic analysis and lowering: resolves names, folds constants, checks types,
//! instantiates generic kernels, rejects recursion and produces a [`kdsl_ir::Module`].
//!
//! Diagnostics are collected in [`Checker::diagnostics`]. A check that fails returns `None`
//! after reporting once; callers that receive `None` report nothing further, so one mistake
//! does not cascade into many messages.

mod attributes;
mod body;
mod call_order;
pub mod constant;
mod define;
mod items;
mod records;
mod signatures;
mod suggestions;
mod unroll;

use crate::ast::{self, FunctionKind as AstFunctionKind, Item};
use kdsl_ir::ErrorCode;
use kdsl_ir::{
    AddressSpace, ArrayType, Diagnostic, Function, FunctionId, FunctionKind, Literal, Module,
    ParameterType, ScalarType, Span,
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
