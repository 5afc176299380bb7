//! Values of the generic type `T`, sub-group operations and calls of device functions.

use super::*;

impl Generator<'_> {
    // The generic type `T`: values stay integers in the domain every instance holds exactly.

    pub fn generic_literal(&mut self, low: i128, high: i128) -> Expr {
        let value = self.random.between(low.max(-20), high.min(20));
        let value = value.clamp(low, high);
        Expr::new(
            format!("({} as T)", plain_integer_literal(value)),
            ValueType::Generic,
            interval_facts(Uniformity::WorkGroup, value, value),
        )
    }

    /// `value` (of type `T`) forced into `low..=high`.
    pub fn fit_generic(&mut self, value: Expr, low: i128, high: i128) -> Expr {
        if let Some((have_low, have_high)) = value.facts.integer_interval() {
            if have_low >= low && have_high <= high {
                return value;
            }
        }
        Expr::new(
            format!(
                "clamp({}, ({} as T), ({} as T))",
                value.text,
                plain_integer_literal(low),
                plain_integer_literal(high)
            ),
            ValueType::Generic,
            interval_facts(value.uniformity(), low, high),
        )
    }

    pub fn generic_value(
        &mut self,
        low: i128,
        high: i128,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let domain = self.generic.clone().expect("a generic kernel");
        let vt = ValueType::Generic;
        if depth == 0 || self.percent(25) || high - low < 4 {
            if self.percent(70) {
                if let Some(read) = self.read(vt, uniformity, false, depth) {
                    return self.fit_generic(read, low, high);
                }
            }
            return self.generic_literal(low, high);
        }
        let inner = depth - 1;
        let join = |a: &Expr, b: &Expr| a.uniformity().join(b.uniformity());
        let interval = |e: &Expr| e.facts.integer_interval().unwrap_or((0, 0));
        let sub_groups = self.sub_group_operations_allowed() && domain.all_in(&SUB_GROUP_TYPES);
        let negation = domain.all_signed_or_float() && low == -high;
        // add, multiply, min/max, clamp, abs, negate, remainder, select, from integer, from
        // float, sub-group.
        let weights = [
            10,
            6,
            4,
            2,
            2,
            if negation { 2 } else { 0 },
            3,
            2,
            5,
            if self.float_to_integer_conversions {
                3
            } else {
                0
            },
            if sub_groups { 3 } else { 0 },
        ];
        let result = match self.random.weighted(&weights) {
            0 => {
                let a = self.generic_value(low / 2, high / 2, uniformity, inner);
                let b = self.generic_value(low / 2, high / 2, uniformity, inner);
                self.note("T arithmetic");
                let ((la, ha), (lb, hb)) = (interval(&a), interval(&b));
                Expr::new(
                    format!("({} + {})", a.text, b.text),
                    vt,
                    interval_facts(join(&a, &b), la + lb, ha + hb),
                )
            }
            1 => {
                let root = ((high.max(-low)) as f64).sqrt().floor() as i128;
                let (sub_low, sub_high) = if low < 0 { (-root, root) } else { (0, root) };
                let a = self.generic_value(sub_low, sub_high, uniformity, inner);
                let b = self.generic_value(sub_low, sub_high, uniformity, inner);
                self.note("T arithmetic");
                let (l, h) =
                    checked_interval_product(interval(&a), interval(&b)).unwrap_or((low, high));
                Expr::new(
                    format!("({} * {})", a.text, b.text),
                    vt,
                    interval_facts(join(&a, &b), l, h),
                )
            }
            2 => {
                let a = self.generic_value(low, high, uniformity, inner);
                let b = self.generic_value(low, high, uniformity, inner);
                let minimum = self.percent(50);
                self.note("T min/max");
                let ((la, ha), (lb, hb)) = (interval(&a), interval(&b));
                let (l, h) = if minimum {
                    (la.min(lb), ha.min(hb))
                } else {
                    (la.max(lb), ha.max(hb))
                };
                Expr::new(
                    format!(
                        "{}({}, {})",
                        if minimum { "min" } else { "max" },
                        a.text,
                        b.text
                    ),
                    vt,
                    interval_facts(join(&a, &b), l, h),
                )
            }
            3 => {
                let a = self.generic_value(domain.low, domain.high, uniformity, inner);
                self.note("T clamp");
                self.fit_generic(
                    Expr::new(
                        a.text.clone(),
                        vt,
                        interval_facts(a.uniformity(), domain.low, domain.high),
                    ),
                    low,
                    high,
                )
            }
            4 => {
                let limit = high.min(-low.min(0)).max(0);
                let (sub_low, sub_high) = if low < 0 { (-limit, limit) } else { (0, high) };
                let a = self.generic_value(sub_low, sub_high, uniformity, inner);
                self.note("T abs");
                let (la, ha) = interval(&a);
                Expr::new(
                    format!("abs({})", a.text),
                    vt,
                    interval_facts(a.uniformity(), 0, la.abs().max(ha.abs())),
                )
            }
            5 => {
                let a = self.generic_value(low, high, uniformity, inner);
                self.note("T negation");
                let (la, ha) = interval(&a);
                Expr::new(
                    format!("(-{})", a.text),
                    vt,
                    interval_facts(a.uniformity(), -ha, -la),
                )
            }
            6 => {
                let modulus = self.random.between(2, high.clamp(2, 16));
                let a = self.generic_value(domain.low, domain.high, uniformity, inner);
                self.note("T remainder");
                let (la, ha) = interval(&a);
                let bound = modulus - 1;
                Expr::new(
                    format!("({} % ({modulus} as T))", a.text),
                    vt,
                    interval_facts(a.uniformity(), la.max(-bound).min(0), ha.min(bound).max(0)),
                )
            }
            7 => {
                let condition = self.bool_value(uniformity, inner);
                let a = self.generic_value(low, high, uniformity, inner);
                let b = self.generic_value(low, high, uniformity, inner);
                self.note("select");
                let ((la, ha), (lb, hb)) = (interval(&a), interval(&b));
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    interval_facts(
                        join(&a, &b).join(condition.uniformity()),
                        la.min(lb),
                        ha.max(hb),
                    ),
                )
            }
            8 => {
                let from = self.random_integer_type();
                let (from_low, from_high) = integer_range(from);
                let (fit_low, fit_high) = (low.max(from_low), high.min(from_high));
                if fit_low > fit_high {
                    return self.generic_literal(low, high);
                }
                let a = self.integer_value(from, uniformity, inner);
                let a = self.fit_integer(a, fit_low, fit_high);
                self.note("cast integer to T");
                let (la, ha) = interval(&a);
                Expr::new(
                    format!("({} as T)", a.text),
                    vt,
                    interval_facts(a.uniformity(), la, ha),
                )
            }
            9 => {
                let from = self.random_float_type();
                let a = self.float_value(from, FloatNeed::Deterministic, uniformity, inner);
                self.note("cast float to T");
                Expr::new(
                    format!(
                        "(clamp(floor({}), {}, {}) as T)",
                        a.text,
                        float_literal(low as f64, from),
                        float_literal(high as f64, from)
                    ),
                    vt,
                    interval_facts(a.uniformity(), low, high),
                )
            }
            _ => self.sub_group_operation(vt, uniformity, inner, OperandBound::Generic(low, high)),
        };
        if result.facts.uniformity > uniformity {
            return self.generic_literal(low, high);
        }
        self.fit_generic(result, low, high)
    }

    // -----------------------------------------------------------------------------------------
    // Sub-groups and calls.

    /// A sub-group operation on a value of `ty` whose result must stay within `bound`.
    pub(super) fn sub_group_operation(
        &mut self,
        ty: ValueType,
        uniformity: Uniformity,
        depth: u32,
        bound: OperandBound,
    ) -> Expr {
        // Reductions are uniform within the sub-group, shuffles are not; nothing here is
        // uniform across the work-group.
        let operation = match uniformity {
            Uniformity::WorkGroup => return self.fallback_literal(ty, bound),
            Uniformity::SubGroup => self.random.below(3),
            Uniformity::Varying => self.random.below(8),
        };
        // A lane to read: any lane of the sub-group.
        let lane = |me: &mut Self, u: Uniformity| {
            let raw = me.integer_value(ScalarType::U32, u, depth.min(1));
            Expr::new(
                format!("({} % sub_group_size())", raw.text),
                ValueType::Scalar(ScalarType::U32),
                interval_facts(raw.uniformity(), 0, 63),
            )
        };
        // An operand of which `lanes` together stay within the bound.
        let operand = |me: &mut Self, lanes: f64| -> Expr {
            match (ty, bound) {
                (ValueType::Scalar(scalar), OperandBound::Float(magnitude, granularity)) => me
                    .exact_float(
                        scalar,
                        (magnitude / lanes).floor().max(0.0),
                        granularity,
                        Uniformity::Varying,
                        depth,
                    ),
                (ValueType::Generic, OperandBound::Generic(low, high)) => {
                    let lanes = lanes as i128;
                    me.generic_value(low / lanes, high / lanes, Uniformity::Varying, depth)
                }
                (ValueType::Scalar(scalar), _) => {
                    me.integer_value(scalar, Uniformity::Varying, depth)
                }
                (ValueType::Generic, _) => {
                    let (low, high) = me.generic_interval();
                    me.generic_value(low / 64, high / 64, Uniformity::Varying, depth)
                }
            }
        };
        match operation {
            0 => {
                let x = operand(self, 64.0);
                self.note("sub_group_reduce_add");
                let value = match (x.facts.value, ty) {
                    (
                        ValueFacts::Float(FloatFacts::Exact {
                            magnitude,
                            granularity,
                        }),
                        _,
                    ) => ValueFacts::exact(magnitude * 64.0, granularity),
                    (ValueFacts::Integer { low, high }, ValueType::Generic) => {
                        ValueFacts::interval(low * 64, high * 64)
                    }
                    (_, ValueType::Scalar(scalar)) => ValueFacts::anything(scalar),
                    (other, _) => other,
                };
                Expr::new(
                    format!("sub_group_reduce_add({})", x.text),
                    ty,
                    Facts::new(Uniformity::SubGroup, value),
                )
            }
            1 | 2 => {
                let x = operand(self, 1.0);
                let name = if operation == 1 {
                    "sub_group_reduce_min"
                } else {
                    "sub_group_reduce_max"
                };
                self.note(if operation == 1 {
                    "sub_group_reduce_min"
                } else {
                    "sub_group_reduce_max"
                });
                Expr::new(
                    format!("{name}({})", x.text),
                    ty,
                    Facts::new(Uniformity::SubGroup, x.facts.value),
                )
            }
            3 => {
                let x = operand(self, 1.0);
                let from = lane(self, Uniformity::Varying);
                self.note("sub_group_shuffle");
                let u = if from.uniformity() <= Uniformity::SubGroup {
                    Uniformity::SubGroup
                } else {
                    Uniformity::Varying
                };
                Expr::new(
                    format!("sub_group_shuffle({}, {})", x.text, from.text),
                    ty,
                    Facts::new(u, x.facts.value),
                )
            }
            5 => {
                // A scan's prefixes stay within what the whole sub-group's sum does.
                let inclusive = self.random.below(2) == 0;
                let which = self.random.below(3);
                let x = operand(self, if which == 0 { 64.0 } else { 1.0 });
                let kind = if inclusive { "inclusive" } else { "exclusive" };
                let (combine, value) = match which {
                    0 => {
                        let value = match (x.facts.value, ty) {
                            (
                                ValueFacts::Float(FloatFacts::Exact {
                                    magnitude,
                                    granularity,
                                }),
                                _,
                            ) => ValueFacts::exact(magnitude * 64.0, granularity),
                            (ValueFacts::Integer { low, high }, ValueType::Generic) => {
                                ValueFacts::interval(low.min(0) * 64, high.max(0) * 64)
                            }
                            (_, ValueType::Scalar(scalar)) => ValueFacts::anything(scalar),
                            (other, _) => other,
                        };
                        ("add", value)
                    }
                    // An exclusive min/max gives lane 0 the type's extreme: anything.
                    1 | 2 if !inclusive => match ty {
                        ValueType::Scalar(scalar) => (
                            if which == 1 { "min" } else { "max" },
                            ValueFacts::anything(scalar),
                        ),
                        ValueType::Generic => return x,
                    },
                    1 => ("min", x.facts.value),
                    _ => ("max", x.facts.value),
                };
                let name = format!("sub_group_scan_{kind}_{combine}");
                self.note(match name.as_str() {
                    "sub_group_scan_inclusive_add" => "sub_group_scan_inclusive_add",
                    "sub_group_scan_exclusive_add" => "sub_group_scan_exclusive_add",
                    _ => "sub_group_scan_min_max",
                });
                Expr::new(
                    format!("{name}({})", x.text),
                    ty,
                    Facts::new(Uniformity::Varying, value),
                )
            }
            6 | 7 => {
                let x = operand(self, 1.0);
                let delta = lane(self, Uniformity::WorkGroup);
                let name = if operation == 6 {
                    "sub_group_shuffle_up"
                } else {
                    "sub_group_shuffle_down"
                };
                self.note(name);
                Expr::new(
                    format!("{name}({}, {})", x.text, delta.text),
                    ty,
                    Facts::new(Uniformity::Varying, x.facts.value),
                )
            }
            _ => {
                let x = operand(self, 1.0);
                let mask = lane(self, Uniformity::WorkGroup);
                self.note("sub_group_shuffle_xor");
                Expr::new(
                    format!("sub_group_shuffle_xor({}, {})", x.text, mask.text),
                    ty,
                    Facts::new(Uniformity::Varying, x.facts.value),
                )
            }
        }
    }

    /// A literal within `bound`, for where a sub-group operation cannot go.
    pub(super) fn fallback_literal(&mut self, ty: ValueType, bound: OperandBound) -> Expr {
        match (ty, bound) {
            (ValueType::Scalar(scalar), OperandBound::Float(magnitude, granularity)) => {
                self.float_literal_within(scalar, magnitude, granularity)
            }
            (ValueType::Generic, OperandBound::Generic(low, high)) => {
                self.generic_literal(low, high)
            }
            (ValueType::Generic, _) => {
                let (low, high) = self.generic_interval();
                self.generic_literal(low, high)
            }
            (ValueType::Scalar(scalar), _) => self.integer_literal(scalar),
        }
    }

    /// Functions returning `ty` that can be called here.
    pub fn callable(&self, ty: ScalarType) -> Vec<usize> {
        self.functions
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f.result, Some((result, _)) if result == ty))
            .filter(|(_, f)| !f.tuple_result || self.tuple_bindings)
            .filter(|(_, f)| {
                f.parameters.iter().all(|p| match p {
                    FunctionParameter::InputBuffer { element, .. } => {
                        self.buffers.iter().any(|b| {
                            b.usage == BufferUse::Input
                                && b.shape.is_none()
                                && b.element == ValueType::Scalar(*element)
                        })
                    }
                    FunctionParameter::Scalar { .. } | FunctionParameter::Pair { .. } => true,
                    _ => false,
                })
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// A call of a device function returning `ty` (there is one: see [`Self::callable`]).
    pub(super) fn call(&mut self, ty: ScalarType, uniformity: Uniformity, depth: u32) -> Expr {
        let candidates = self.callable(ty);
        let index = *self.random.pick(&candidates);
        let function = self.functions[index].clone();
        let mut arguments = Vec::new();
        let mut joined = Uniformity::WorkGroup;
        for parameter in &function.parameters {
            match parameter {
                FunctionParameter::Scalar { ty, facts, .. } => {
                    let argument = self.argument_within(*ty, *facts, uniformity, depth);
                    joined = joined.join(argument.uniformity());
                    arguments.push(argument.text);
                }
                FunctionParameter::InputBuffer { element, .. } => {
                    let buffers: Vec<String> = self
                        .buffers
                        .iter()
                        .filter(|b| {
                            b.usage == BufferUse::Input
                                && b.shape.is_none()
                                && b.element == ValueType::Scalar(*element)
                        })
                        .map(|b| b.name.clone())
                        .collect();
                    arguments.push(self.random.pick(&buffers).clone());
                }
                FunctionParameter::Pair { types, facts, .. } => {
                    let first = self.argument_within(types[0], facts[0], uniformity, depth);
                    let second = self.argument_within(types[1], facts[1], uniformity, depth);
                    joined = joined.join(first.uniformity()).join(second.uniformity());
                    arguments.push(format!("({}, {})", first.text, second.text));
                    self.note("tuple argument");
                }
                _ => unreachable!("value functions take scalars, tuples and input buffers"),
            }
        }
        self.note("device function call");
        let (_, result_facts) = function.result.expect("a value function");
        let call = format!("{}({})", function.name, arguments.join(", "));
        let text = if function.tuple_result {
            // A call returning a tuple is a statement of its own: bind it just before the
            // statement this expression is for (the generator writes code in order).
            let value = self.fresh("t");
            self.code
                .line(format!("let ({value}, {value}_tag) = {call};"));
            self.note("tuple binding");
            value
        } else {
            call
        };
        Expr::new(
            text,
            ValueType::Scalar(ty),
            Facts::new(joined, result_facts),
        )
    }

    /// A value of `ty` within a parameter's declared facts.
    pub fn argument_within(
        &mut self,
        ty: ScalarType,
        facts: ValueFacts,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        match facts {
            ValueFacts::Float(FloatFacts::Exact {
                magnitude,
                granularity,
            }) => self.exact_float(ty, magnitude, granularity, uniformity, depth),
            ValueFacts::Float(_) => self.deterministic_float(ty, uniformity, depth),
            ValueFacts::Integer { low, high } => {
                let value = self.integer_value(ty, uniformity, depth);
                self.fit_integer(value, low, high)
            }
            ValueFacts::Bool => self.bool_value(uniformity, depth),
        }
    }
}
