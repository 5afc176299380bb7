//! The syntax tree the parser builds. Every node carries the [`Span`] of its source text.
//!
//! Names are not resolved and types are not checked here; see the `check` module.

pub use kdsl_ir::Span;

/// A whole `.krn` file.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceFile {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Identifier {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Constant(ConstantItem),
    Function(FunctionItem),
    Instance(InstanceItem),
    Record(RecordItem),
    /// A syntax error the parser recovered from.
    Error(Span),
}

/// `const NAME: T = value;`
#[derive(Clone, Debug, PartialEq)]
pub struct ConstantItem {
    pub name: Identifier,
    pub ty: TypeExpression,
    pub value: Expression,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    Kernel,
    Device,
}

/// `fn name(params) -> T { body }` or `kernel name<T, U>(params) { body }`, with the
/// attributes written before it.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionItem {
    pub attributes: Vec<Attribute>,
    pub kind: FunctionKind,
    pub name: Identifier,
    pub type_parameters: Vec<Identifier>,
    pub parameters: Vec<Parameter>,
    pub return_type: Option<TypeExpression>,
    pub body: Block,
    pub span: Span,
}

/// `#[name]` or `#[name(arguments)]`, such as `#[work_group_size(16, 16)]`. Which names exist
/// and what their arguments mean is checked later, so a typo is a diagnostic with a hint.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: Identifier,
    /// `None` when written without parentheses.
    pub arguments: Option<Vec<Expression>>,
    pub span: Span,
}

/// `struct Name { field: T, ... }`: a record type, the element type of buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordItem {
    pub name: Identifier,
    pub fields: Vec<RecordFieldItem>,
    pub span: Span,
}

/// `field: T` in a record declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordFieldItem {
    pub name: Identifier,
    pub ty: TypeExpression,
}

/// `instance alias = generic<type, ...>;`
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceItem {
    pub alias: Identifier,
    pub generic: Identifier,
    pub type_arguments: Vec<TypeExpression>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub name: Identifier,
    pub ty: ParameterTypeExpression,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferSpace {
    Global,
    Constant,
    /// Work-group memory whose length the launch gives (`local mut [T]`).
    Local,
    /// `private [T]`: parsed only to be reported (private arrays have a fixed length).
    Private,
}

/// Where an array passed by reference lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArraySpace {
    Local,
    Private,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParameterTypeExpression {
    /// A value parameter such as `f32` or `T`.
    Value(TypeExpression),
    /// `global [T]`, `global mut [T]`, `constant [T]` or `local mut [T]`.
    Buffer {
        space: BufferSpace,
        writable: bool,
        element: TypeExpression,
        span: Span,
    },
    /// `global [[T]]` (2 dimensions), `global mut [[[T]]]` (3): a buffer with a run-time shape
    /// and strides.
    ShapedBuffer {
        space: BufferSpace,
        writable: bool,
        element: TypeExpression,
        rank: u8,
        span: Span,
    },
    /// `local [T; N]`, `private mut [[T; N]; M]`: an array of the caller, by reference.
    Array {
        space: ArraySpace,
        writable: bool,
        ty: TypeExpression,
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExpression {
    /// A scalar type name or a type parameter.
    Named(Identifier),
    /// `[element; length]`.
    Array {
        element: Box<TypeExpression>,
        length: Box<Expression>,
        span: Span,
    },
    /// `(T, U, ...)`: a tuple of scalars.
    Tuple {
        elements: Vec<TypeExpression>,
        span: Span,
    },
}

impl TypeExpression {
    pub fn span(&self) -> Span {
        match self {
            TypeExpression::Named(name) => name.span,
            TypeExpression::Array { span, .. } | TypeExpression::Tuple { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub statements: Vec<Statement>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOperator {
    Assign,
    Compound(BinaryOperator),
}

#[derive(Clone, Debug, PartialEq)]
pub enum StatementKind {
    /// `let [mut] name [: T] [= value];`
    Let {
        mutable: bool,
        name: Identifier,
        ty: Option<TypeExpression>,
        value: Option<Expression>,
    },
    /// `let (a, mut b) [: (T, U)] = value;`: destructures a tuple.
    LetTuple {
        /// Each name with whether it is `mut`.
        names: Vec<(bool, Identifier)>,
        ty: Option<TypeExpression>,
        value: Expression,
    },
    /// `local name: [T; N];`
    Local {
        name: Identifier,
        ty: TypeExpression,
    },
    /// `target = value;` or `target op= value;`
    Assign {
        target: Expression,
        operator: AssignOperator,
        operator_span: Span,
        value: Expression,
    },
    If {
        condition: Expression,
        accept: Block,
        /// `else { .. }`; `else if` becomes a block holding one `If` statement.
        reject: Option<Block>,
    },
    While {
        condition: Expression,
        body: Block,
    },
    /// `for variable in start..end [step step] [unroll | unroll(count)] { body }`, or with
    /// `(start..end).rev()` counting down from `end - 1` (`descending`).
    For {
        variable: Identifier,
        start: Expression,
        end: Expression,
        descending: bool,
        step: Option<Expression>,
        unroll: Option<UnrollRequest>,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expression>),
    /// A nested `{ .. }` block with its own scope.
    Block(Block),
    /// An expression evaluated for its effect, such as a call.
    Expression(Expression),
    /// A syntax error the parser recovered from.
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOperator {
    Negate,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOperator {
    Add,
    Subtract,
    Multiply,
    Divide,
    Remainder,
    BitAnd,
    BitOr,
    BitXor,
    ShiftLeft,
    ShiftRight,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    And,
    Or,
}

impl BinaryOperator {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOperator::Add => "+",
            BinaryOperator::Subtract => "-",
            BinaryOperator::Multiply => "*",
            BinaryOperator::Divide => "/",
            BinaryOperator::Remainder => "%",
            BinaryOperator::BitAnd => "&",
            BinaryOperator::BitOr => "|",
            BinaryOperator::BitXor => "^",
            BinaryOperator::ShiftLeft => "<<",
            BinaryOperator::ShiftRight => ">>",
            BinaryOperator::Equal => "==",
            BinaryOperator::NotEqual => "!=",
            BinaryOperator::Less => "<",
            BinaryOperator::LessEqual => "<=",
            BinaryOperator::Greater => ">",
            BinaryOperator::GreaterEqual => ">=",
            BinaryOperator::And => "&&",
            BinaryOperator::Or => "||",
        }
    }
}

/// A numeric literal as written, before its type is known.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    /// `value` is `None` when the digits do not fit in 128 bits.
    Integer {
        value: Option<u128>,
        suffix: Option<String>,
    },
    Float {
        value: f64,
        /// The decimal digits as written (no `_`, no suffix), so the value can be rounded
        /// once to the literal's type when that is known.
        text: String,
        suffix: Option<String>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expression {
    pub kind: ExpressionKind,
    pub span: Span,
    /// How deeply nested this expression is (1 for a leaf); the parser caps it.
    pub depth: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExpressionKind {
    Literal(Literal),
    Name(Identifier),
    /// `f32::INFINITY`, `u32::MAX`: a constant of a scalar type.
    AssociatedConstant {
        ty: Identifier,
        name: Identifier,
    },
    Unary {
        operator: UnaryOperator,
        operand: Box<Expression>,
    },
    Binary {
        operator: BinaryOperator,
        left: Box<Expression>,
        right: Box<Expression>,
    },
    Cast {
        value: Box<Expression>,
        ty: TypeExpression,
    },
    /// `base[index]`; `tile[y][x]` nests.
    Index {
        base: Box<Expression>,
        index: Box<Expression>,
    },
    /// `name(arguments)`: a built-in or a device function.
    Call {
        callee: Identifier,
        arguments: Vec<Expression>,
    },
    Parenthesized(Box<Expression>),
    /// `if condition { accept } else { reject }` as a value; `else if` nests in `reject`.
    If {
        condition: Box<Expression>,
        accept: Box<Expression>,
        reject: Box<Expression>,
    },
    /// `(a, b, ...)`: a tuple of at least two elements.
    Tuple(Vec<Expression>),
    /// `value.0`: a tuple's element, or `value.x`: a vector's component; `field` holds the
    /// digits or name as written.
    Field {
        base: Box<Expression>,
        field: Identifier,
    },
    /// `base.method(arguments)`: `a.shape(0)` of a multi-dimensional buffer.
    MethodCall {
        base: Box<Expression>,
        method: Identifier,
        arguments: Vec<Expression>,
    },
    /// A string literal as written, with its quotes and escapes: only `print`'s format.
    String(String),
    /// `Node { start: 1, edges: 2 }`: a record value, written as a `let` initializer or an
    /// assigned value.
    RecordLiteral {
        name: Identifier,
        fields: Vec<(Identifier, Expression)>,
    },
    /// A syntax error the parser recovered from, or an expression nested too deeply.
    Error,
}

/// The deepest expression tree the parser accepts (each binary operator is one level, so this
/// is also the longest operator chain; brackets nest at most 256 deep, see the lexer). Every
/// pass that recurses over expressions fits it in a 2 MiB stack.
pub const MAX_EXPRESSION_DEPTH: u32 = 1024;

impl Expression {
    pub fn leaf(kind: ExpressionKind, span: Span) -> Expression {
        Expression {
            kind,
            span,
            depth: 1,
        }
    }

    /// Builds a node over `children`, computing its depth without recursion.
    pub fn node(kind: ExpressionKind, span: Span, children_depth: u32) -> Expression {
        Expression {
            kind,
            span,
            depth: children_depth.saturating_add(1),
        }
    }
}

/// `unroll` (a full unroll) or `unroll(count)` written after a `for` loop's range.
#[derive(Clone, Debug, PartialEq)]
pub struct UnrollRequest {
    /// The factor, a constant expression; `None` asks for a full unroll.
    pub count: Option<Box<Expression>>,
    pub span: Span,
}
