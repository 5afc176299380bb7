//! The validator's own tests: modules built by hand, each breaking one invariant.

use super::*;
use crate::types::ArrayType;

fn expression(kind: ExpressionKind, ty: ScalarType) -> Expression {
    Expression {
        id: crate::ExprId::UNNUMBERED,
        kind,
        ty,
        span: Span::default(),
    }
}

fn literal(value: u64, ty: ScalarType) -> Expression {
    expression(ExpressionKind::Literal(Literal::Integer(value)), ty)
}

fn statement(kind: StatementKind) -> Statement {
    Statement {
        kind,
        span: Span::default(),
    }
}

fn kernel(parameters: Vec<ParameterType>, variables: Vec<Variable>, body: Block) -> Function {
    let mut function = Function {
        name: "k".into(),
        kind: FunctionKind::Kernel,
        parameters: parameters
            .into_iter()
            .enumerate()
            .map(|(i, ty)| Parameter {
                name: format!("p{i}"),
                ty,
                span: Span::default(),
            })
            .collect(),
        return_type: None,
        variables,
        body,
        span: Span::default(),
        work_group_size: None,
        shaped_buffers: Vec::new(),
        contiguous_entry: None,
        contiguous_copy_of: None,
    };
    crate::ids::number_function(&mut function);
    function
}

fn scalar_variable(ty: ScalarType) -> Variable {
    Variable {
        name: "v".into(),
        ty: VariableType::Scalar { ty },
        space: AddressSpace::Private,
        span: Span::default(),
    }
}

fn messages(module: &Module) -> Vec<String> {
    validate(module)
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|e| e.message)
        .collect()
}

fn read_only_buffer() -> ParameterType {
    ParameterType::Buffer {
        element: ScalarType::F32,
        space: AddressSpace::Global,
        writable: false,
        record: None,
    }
}

fn buffer_place(element: ScalarType) -> Place {
    Place {
        id: crate::PlaceId::UNNUMBERED,
        base: PlaceBase::Parameter(ParameterId(0)),
        indices: vec![literal(0, ScalarType::U32)],
        element,
        space: AddressSpace::Global,
        field: None,
    }
}

#[test]
fn accepts_a_valid_kernel() {
    let body = vec![statement(StatementKind::Assign {
        variable: VariableId(0),
        value: expression(
            ExpressionKind::WorkItem {
                query: WorkItemQuery::GlobalId,
                dimension: 0,
            },
            ScalarType::U32,
        ),
    })];
    let module = Module {
        functions: vec![kernel(vec![], vec![scalar_variable(ScalarType::U32)], body)],
        constants: Vec::new(),
    };
    assert_eq!(validate(&module), Ok(()));
}

#[test]
fn rejects_mismatched_binary_operands_and_bad_ids() {
    let sum = expression(
        ExpressionKind::Binary {
            op: BinaryOp::Add,
            left: Box::new(literal(1, ScalarType::U32)),
            right: Box::new(literal(1, ScalarType::I32)),
        },
        ScalarType::U32,
    );
    let body = vec![
        statement(StatementKind::Assign {
            variable: VariableId(0),
            value: sum,
        }),
        statement(StatementKind::Assign {
            variable: VariableId(7),
            value: literal(1, ScalarType::U32),
        }),
    ];
    let module = Module {
        functions: vec![kernel(vec![], vec![scalar_variable(ScalarType::U32)], body)],
        constants: Vec::new(),
    };
    let found = messages(&module);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("Add of `u32` and `i32`"));
    assert!(found[1].contains("variable $7 does not exist"));
}

#[test]
fn rejects_writes_and_atomics_on_read_only_buffers() {
    let atomic = expression(
        ExpressionKind::Atomic {
            op: AtomicOp::Add,
            place: Box::new(buffer_place(ScalarType::F32)),
            value: Box::new(expression(
                ExpressionKind::Literal(Literal::Float(1.0)),
                ScalarType::F32,
            )),
            comparand: None,
        },
        ScalarType::F32,
    );
    let body = vec![
        statement(StatementKind::Store {
            place: buffer_place(ScalarType::F32),
            value: expression(
                ExpressionKind::Literal(Literal::Float(1.0)),
                ScalarType::F32,
            ),
        }),
        statement(StatementKind::Evaluate { value: atomic }),
    ];
    let module = Module {
        functions: vec![kernel(vec![read_only_buffer()], vec![], body)],
        constants: Vec::new(),
    };
    let found = messages(&module);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|m| m.contains("read-only buffer %0")));
}

#[test]
fn checks_record_buffers_and_field_places() {
    let record = crate::records::RecordType::new(
        "Node",
        &[
            ("start".into(), ScalarType::I32),
            ("edges".into(), ScalarType::I32),
        ],
    );
    let records = ParameterType::Buffer {
        element: ScalarType::U8,
        space: AddressSpace::Global,
        writable: true,
        record: Some(Box::new(record.clone())),
    };
    let mut tampered = record;
    tampered.size = 12;
    let bad_layout = ParameterType::Buffer {
        element: ScalarType::U8,
        space: AddressSpace::Global,
        writable: true,
        record: Some(Box::new(tampered)),
    };
    let store = |field: Option<u32>, element: ScalarType, parameter: u32| {
        statement(StatementKind::Store {
            place: Place {
                id: crate::PlaceId::UNNUMBERED,
                base: PlaceBase::Parameter(ParameterId(parameter)),
                field,
                ..buffer_place(element)
            },
            value: literal(1, element),
        })
    };
    let good = Module {
        functions: vec![kernel(
            vec![records.clone()],
            vec![],
            vec![store(Some(1), ScalarType::I32, 0)],
        )],
        constants: Vec::new(),
    };
    assert_eq!(messages(&good), Vec::<String>::new());
    let body = vec![
        store(None, ScalarType::U8, 0),
        store(Some(2), ScalarType::I32, 0),
        store(Some(0), ScalarType::U32, 0),
        store(Some(0), ScalarType::F32, 1),
    ];
    let module = Module {
        functions: vec![kernel(
            vec![records, read_only_buffer(), bad_layout],
            vec![],
            body,
        )],
        constants: Vec::new(),
    };
    let found = messages(&module).join("\n");
    for expected in [
        "an access of a whole `Node`",
        "record `Node` has no field 2",
        "place element type or space differs",
        "a field access of a buffer of scalars",
        "record buffer `p2` has an inconsistent layout",
    ] {
        assert!(found.contains(expected), "{expected}: {found}");
    }
}

#[test]
fn rejects_break_outside_loops_and_non_bool_conditions() {
    let body = vec![
        statement(StatementKind::Break),
        statement(StatementKind::If {
            condition: literal(1, ScalarType::U32),
            accept: vec![],
            reject: vec![],
        }),
        statement(StatementKind::Loop {
            body: vec![statement(StatementKind::Break)],
            continuing: vec![],
            unroll: Unroll::Default,
        }),
    ];
    let module = Module {
        functions: vec![kernel(vec![], vec![], body)],
        constants: Vec::new(),
    };
    let found = messages(&module);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("outside of a loop"));
    assert!(found[1].contains("condition has type `u32`"));
}

#[test]
fn rejects_calls_to_later_functions_and_bad_arguments() {
    let call = expression(
        ExpressionKind::Call {
            function: FunctionId(1),
            arguments: vec![Argument::Value(literal(1, ScalarType::I32))],
        },
        ScalarType::F32,
    );
    let caller = kernel(
        vec![],
        vec![],
        vec![statement(StatementKind::Evaluate { value: call })],
    );
    let callee = Function {
        name: "f".into(),
        kind: FunctionKind::Device,
        parameters: vec![Parameter {
            name: "x".into(),
            ty: ParameterType::Scalar {
                ty: ScalarType::F32,
            },
            span: Span::default(),
        }],
        return_type: Some(ScalarType::F32),
        variables: vec![],
        body: vec![statement(StatementKind::Return { value: None })],
        span: Span::default(),
        shaped_buffers: Vec::new(),
        contiguous_entry: None,
        contiguous_copy_of: None,
        work_group_size: None,
    };
    let module = Module {
        functions: vec![caller, callee],
        constants: Vec::new(),
    };
    let found = messages(&module);
    assert!(
        found
            .iter()
            .any(|m| m.contains("does not come before the caller")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains("passes a `i32` for parameter `x`")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains("returns nothing, expected `f32`")),
        "{found:?}"
    );
}

#[test]
fn rejects_bad_places_dimensions_and_atomic_types() {
    let array = Variable {
        name: "tile".into(),
        ty: VariableType::Array {
            ty: ArrayType {
                element: ScalarType::U8,
                dimensions: vec![4, 4],
            },
        },
        space: AddressSpace::Local,
        span: Span::default(),
    };
    let place = Place {
        id: crate::PlaceId::UNNUMBERED,
        base: PlaceBase::Variable(VariableId(0)),
        indices: vec![expression(
            ExpressionKind::Literal(Literal::Float(0.0)),
            ScalarType::F32,
        )],
        element: ScalarType::U8,
        space: AddressSpace::Local,
        field: None,
    };
    let atomic = expression(
        ExpressionKind::Atomic {
            op: AtomicOp::Max,
            place: Box::new(place),
            value: Box::new(literal(1, ScalarType::U8)),
            comparand: None,
        },
        ScalarType::U8,
    );
    let query = expression(
        ExpressionKind::WorkItem {
            query: WorkItemQuery::LocalId,
            dimension: 3,
        },
        ScalarType::U32,
    );
    let body = vec![
        statement(StatementKind::Evaluate { value: atomic }),
        statement(StatementKind::Evaluate { value: query }),
    ];
    let module = Module {
        functions: vec![kernel(vec![], vec![array], body)],
        constants: Vec::new(),
    };
    let found = messages(&module);
    assert!(
        found.iter().any(|m| m.contains("not an integer")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains("1 indices for 2 dimensions")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|m| m.contains("`atomic_max` on `u8`")),
        "{found:?}"
    );
    assert!(found.iter().any(|m| m.contains("dimension 3")), "{found:?}");
}
