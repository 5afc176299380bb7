//! Device functions: scalar helpers that return a value within declared bounds, and helpers
//! that store into an output slot their caller passes.

use crate::expression::{default_exact_need, FloatNeed};
use crate::facts::{Facts, Uniformity, ValueFacts};
use crate::generator::{Generator, Place};
use crate::scope::{
    BufferParameter, BufferUse, Control, FunctionParameter, FunctionSignature, Scope, Variable,
};
use crate::types::{integer_range, ValueType};
use kdsl_ir::ScalarType;

impl Generator<'_> {
    /// The facts a scalar parameter or result of type `ty` promises.
    fn contract(&mut self, ty: ScalarType) -> ValueFacts {
        if ty == ScalarType::Bool {
            ValueFacts::Bool
        } else if ty.is_float() {
            let FloatNeed::Exact {
                magnitude,
                granularity,
            } = default_exact_need(ty)
            else {
                unreachable!()
            };
            let scale = 2f64.powi(self.random.between(0, 4) as i32 * 2);
            ValueFacts::exact((magnitude / scale).floor(), granularity)
        } else if self.percent(50) {
            let (low, high) = integer_range(ty);
            let bound = self.random.between(1, 1000).min(high);
            ValueFacts::interval((-bound).max(low), bound)
        } else {
            ValueFacts::anything(ty)
        }
    }

    /// Writes one device function and makes it callable from what follows.
    pub fn device_function(&mut self, inputs: &[BufferParameter]) {
        let name = self.fresh("f");
        let outputs: Vec<BufferParameter> = self
            .buffers
            .iter()
            .filter(|b| {
                matches!(
                    b.usage,
                    BufferUse::Output {
                        approximate: false,
                        ..
                    }
                ) && b.element.scalar().is_some()
                    && b.shape.is_none()
            })
            .cloned()
            .collect();
        let storing = !outputs.is_empty() && self.percent(30);
        let mut parameters = Vec::new();
        let mut output_element = None;
        if storing {
            let output = self.random.pick(&outputs).clone();
            let element = output.element.scalar().unwrap();
            output_element = Some(element);
            parameters.push(FunctionParameter::OutputBuffer {
                name: "target".into(),
                element,
                length: output.length,
            });
            parameters.push(FunctionParameter::Slot {
                name: "slot".into(),
            });
        }
        let scalar_count = 1 + self.random.below(3);
        for index in 0..scalar_count {
            let ty = self.random_type();
            let facts = self.contract(ty);
            parameters.push(FunctionParameter::Scalar {
                name: format!("p{index}"),
                ty,
                facts,
            });
        }
        if self.percent(25) {
            let types = [self.random_type(), self.random_type()];
            let facts = [self.contract(types[0]), self.contract(types[1])];
            parameters.push(FunctionParameter::Pair {
                name: "pair".into(),
                types,
                facts,
            });
        }
        if !inputs.is_empty() && self.percent(40) {
            let input = self.random.pick(inputs).clone();
            if let ValueType::Scalar(element) = input.element {
                parameters.push(FunctionParameter::InputBuffer {
                    name: "data".into(),
                    element,
                });
            }
        }
        let result = if storing {
            None
        } else {
            let ty = self.random_type();
            let facts = self.contract(ty);
            Some((ty, facts))
        };
        let tuple_result = result.is_some() && self.percent(30);

        // The body sees only its parameters.
        let saved_scope = std::mem::take(&mut self.scope);
        let saved_buffers = std::mem::take(&mut self.buffers);
        let saved_scalars = std::mem::take(&mut self.scalars);
        let saved_control = self.control;
        let saved_place = self.place;
        let saved_result = self.function_result;
        // Device functions cannot be generic.
        let saved_generic = self.generic.take();
        self.place = Place::Function;
        self.control = Control::top_level(false);
        self.function_result = result;
        self.function_tuple_result = tuple_result;
        self.scope = Scope::default();
        self.scope.push();
        let mut declarations = Vec::new();
        for parameter in &parameters {
            match parameter {
                FunctionParameter::Scalar { name, ty, facts } => {
                    declarations.push(format!("{name}: {}", ty.name()));
                    self.scope.add_variable(Variable {
                        name: name.clone(),
                        ty: ValueType::Scalar(*ty),
                        facts: Facts::new(Uniformity::Varying, *facts),
                        mutability: None,
                    });
                }
                FunctionParameter::InputBuffer { name, element } => {
                    declarations.push(format!("{name}: global [{}]", element.name()));
                    let model = inputs
                        .iter()
                        .find(|b| b.element == ValueType::Scalar(*element))
                        .expect("an input of the element type");
                    self.buffers.push(BufferParameter {
                        name: name.clone(),
                        element: ValueType::Scalar(*element),
                        length: model.length,
                        usage: BufferUse::Input,
                        data_facts: model.data_facts,
                        shape: None,
                    });
                }
                FunctionParameter::OutputBuffer { name, element, .. } => {
                    declarations.push(format!("{name}: global mut [{}]", element.name()));
                }
                FunctionParameter::Slot { name } => declarations.push(format!("{name}: u32")),
                FunctionParameter::Pair { name, types, facts } => {
                    declarations.push(format!(
                        "{name}: ({}, {})",
                        types[0].name(),
                        types[1].name()
                    ));
                    for element in 0..2 {
                        self.scope.add_variable(Variable {
                            name: format!("{name}.{element}"),
                            ty: ValueType::Scalar(types[element]),
                            facts: Facts::new(Uniformity::Varying, facts[element]),
                            mutability: None,
                        });
                    }
                }
            }
        }
        let header = match result {
            Some((ty, _)) if tuple_result => format!(
                "fn {name}({}) -> ({}, u32) {{",
                declarations.join(", "),
                ty.name()
            ),
            Some((ty, _)) => format!("fn {name}({}) -> {} {{", declarations.join(", "), ty.name()),
            None => format!("fn {name}({}) {{", declarations.join(", ")),
        };
        self.note(if storing {
            "storing device function"
        } else {
            "device function"
        });
        self.code.open(header);
        let count = 1 + self
            .random
            .below(u64::from(self.options.function_statements)) as u32;
        // A function's statements do not count against the kernel's.
        let kernel_statements = std::mem::replace(&mut self.statements, 0);
        self.statements(count);
        self.statements = kernel_statements;
        let depth = 1 + self.random.below(u64::from(self.options.expression_depth)) as u32;
        match (result, output_element) {
            (Some((ty, facts)), _) => {
                let value = self.argument_within(ty, facts, Uniformity::Varying, depth);
                let returned = self.returned(value.text);
                self.code.line(format!("return {returned};"));
            }
            (None, Some(element)) => {
                let value = self.value(ValueType::Scalar(element), Uniformity::Varying, depth);
                self.code.line(format!("target[slot] = {};", value.text));
            }
            (None, None) => unreachable!(),
        }
        self.code.close("}");
        self.code.line("");

        self.scope = saved_scope;
        self.buffers = saved_buffers;
        self.scalars = saved_scalars;
        self.control = saved_control;
        self.place = saved_place;
        self.function_result = saved_result;
        self.function_tuple_result = false;
        self.generic = saved_generic;
        self.functions.push(FunctionSignature {
            name,
            parameters,
            result,
            tuple_result,
        });
    }

    /// What a `return` of `value` writes in the current function: the value, or for a tuple
    /// result the value with a tag.
    pub fn returned(&mut self, value: String) -> String {
        if self.function_tuple_result {
            self.note("tuple result");
            format!("({value}, {}u32)", self.random.below(100))
        } else {
            value
        }
    }
}
