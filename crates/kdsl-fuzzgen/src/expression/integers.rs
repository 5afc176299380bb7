//! Integer and `bool` expressions: arithmetic within intervals, guarded division, comparisons.

use super::*;

impl Generator<'_> {
    // Integers.

    pub fn integer_literal_value(&mut self, ty: ScalarType) -> i128 {
        let (low, high) = integer_range(ty);
        match self.random.below(8) {
            0 => low,
            1 => high,
            2 if low < 0 => -1,
            3 => self.random.between(low, high),
            _ => self.random.between(0, 16.min(high)),
        }
    }

    pub(super) fn integer_literal(&mut self, ty: ScalarType) -> Expr {
        let value = self.integer_literal_value(ty);
        self.integer_constant(value, ty)
    }

    pub fn integer_constant(&mut self, value: i128, ty: ScalarType) -> Expr {
        let text = integer_literal(value, ty, &mut self.random);
        Expr::new(
            text,
            ValueType::Scalar(ty),
            interval_facts(Uniformity::WorkGroup, value, value),
        )
    }

    /// `select(c, a, b)` or, as often, the `if` expression that gives the same value (the
    /// operands have no effects, so evaluating one arm or both cannot differ). An arm holding
    /// a sub-group operation stays in `select` unless the condition is work-group uniform, where
    /// running it in one arm only would be a divergent collective.
    pub(super) fn choice(&mut self, condition: &Expr, a: &Expr, b: &Expr) -> String {
        let collective = |e: &Expr| {
            ["sub_group_reduce", "sub_group_scan", "sub_group_shuffle"]
                .iter()
                .any(|name| e.text.contains(name))
        };
        let divergent = condition.uniformity() != Uniformity::WorkGroup;
        if !(divergent && (collective(a) || collective(b))) && self.random.percent(50) {
            self.note("if expression");
            format!(
                "(if {} {{ {} }} else {{ {} }})",
                condition.text, a.text, b.text
            )
        } else {
            format!("select({}, {}, {})", condition.text, a.text, b.text)
        }
    }

    pub fn integer_value(&mut self, ty: ScalarType, uniformity: Uniformity, depth: u32) -> Expr {
        let vt = ValueType::Scalar(ty);
        if depth == 0 || self.percent(20) {
            if self.percent(70) {
                if let Some(read) = self.read(vt, uniformity, false, depth) {
                    return read;
                }
            }
            return self.integer_literal(ty);
        }
        let inner = depth - 1;
        let signed = ty.is_signed_integer();
        let wide = SUB_GROUP_TYPES.contains(&ty);
        // Add, Sub, Mul, Div, Rem, And/Or/Xor, Not, Shift, Neg, Abs, Min/Max, Clamp, Select,
        // cast from integer, cast from float, cast from bool, cast from T, sub-group, bit
        // count or rotation, call.
        let weights = [
            10,
            8,
            8,
            4,
            4,
            8,
            2,
            5,
            if signed { 2 } else { 0 },
            2,
            4,
            2,
            3,
            6,
            if self.float_to_integer_conversions {
                4
            } else {
                0
            },
            2,
            if self.generic.is_some() { 3 } else { 0 },
            if wide && self.sub_group_operations_allowed() {
                4
            } else {
                0
            },
            2,
            if self.callable(ty).is_empty() { 0 } else { 3 },
        ];
        let choice = self.random.weighted(&weights);
        let generic_range = self.generic_interval();
        let binary = |me: &mut Self, op: &str| {
            let a = me.integer_value(ty, uniformity, inner);
            let b = me.integer_value(ty, uniformity, inner);
            (a, b, op.to_string())
        };
        match choice {
            0..=2 => {
                let op = ["+", "-", "*"][choice];
                let (a, b, op) = binary(self, op);
                self.note("integer arithmetic");
                let (ia, ib) = (
                    a.facts.integer_interval().unwrap(),
                    b.facts.integer_interval().unwrap(),
                );
                let interval = match choice {
                    0 => Some((ia.0 + ib.0, ia.1 + ib.1)),
                    1 => Some((ia.0 - ib.1, ia.1 - ib.0)),
                    _ => checked_interval_product(ia, ib),
                };
                let (type_low, type_high) = integer_range(ty);
                let value = match interval {
                    Some((low, high)) => interval_or_wrapped(vt, low, high, generic_range),
                    None => ValueFacts::interval(type_low, type_high),
                };
                // Overflow is an error: where the operands' intervals allow one, wrap
                // explicitly.
                let fits = interval.is_some_and(|(low, high)| low >= type_low && high <= type_high);
                let text = if fits {
                    format!("({} {op} {})", a.text, b.text)
                } else {
                    self.note("wrapping arithmetic");
                    let wrapping = ["wrapping_add", "wrapping_sub", "wrapping_mul"][choice];
                    format!("{wrapping}({}, {})", a.text, b.text)
                };
                let uniformity_out = a.uniformity().join(b.uniformity());
                Expr::new(text, vt, Facts::new(uniformity_out, value))
            }
            3 | 4 => {
                let a = self.integer_value(ty, uniformity, inner);
                let op = if choice == 3 { "/" } else { "%" };
                let b = self.integer_value(ty, uniformity, inner);
                let (divisor, divisor_interval) = self.guarded_divisor(ty, b);
                self.note(if op == "/" {
                    "integer division"
                } else {
                    "integer remainder"
                });
                let (low, high) = a.facts.integer_interval().unwrap();
                let value = match (op, divisor_interval) {
                    // The divisor is at least 1: the quotient lies between 0 and the dividend.
                    ("/", Some(_)) => ValueFacts::interval(low.min(0), high.max(0)),
                    ("%", Some((_, largest))) => {
                        let bound = largest - 1;
                        ValueFacts::interval(low.max(-bound).min(0), high.min(bound).max(0))
                    }
                    _ => ValueFacts::anything(ty),
                };
                let uniformity_out = a.uniformity().join(divisor.uniformity());
                Expr::new(
                    format!("({} {op} {})", a.text, divisor.text),
                    vt,
                    Facts::new(uniformity_out, value),
                )
            }
            5 => {
                let op = *self.random.pick(&["&", "|", "^"]);
                let (a, b, op) = binary(self, op);
                self.note("bitwise");
                let value = match (
                    op.as_str(),
                    a.facts.integer_interval(),
                    b.facts.integer_interval(),
                ) {
                    ("&", Some((la, ha)), Some((lb, hb))) if la >= 0 || lb >= 0 => {
                        let bound = if la >= 0 && lb >= 0 {
                            ha.min(hb)
                        } else if la >= 0 {
                            ha
                        } else {
                            hb
                        };
                        ValueFacts::interval(0, bound)
                    }
                    _ => ValueFacts::anything(ty),
                };
                let uniformity_out = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {op} {})", a.text, b.text),
                    vt,
                    Facts::new(uniformity_out, value),
                )
            }
            6 => {
                let a = self.integer_value(ty, uniformity, inner);
                self.note("bitwise not");
                Expr::new(
                    format!("(~{})", a.text),
                    vt,
                    Facts::anything(ty, a.uniformity()),
                )
            }
            7 => {
                let a = self.integer_value(ty, uniformity, inner);
                let amount = self.shift_amount(ty, uniformity, inner);
                let op = *self.random.pick(&["<<", ">>"]);
                self.note("shift");
                let value = match (op, a.facts.integer_interval()) {
                    (">>", Some((low, high))) if low >= 0 => ValueFacts::interval(0, high),
                    _ => ValueFacts::anything(ty),
                };
                Expr::new(
                    format!("({} {op} {})", a.text, amount.text),
                    vt,
                    Facts::new(a.uniformity().join(amount.uniformity()), value),
                )
            }
            8 => {
                let a = self.integer_value(ty, uniformity, inner);
                self.note("integer negation");
                let (low, high) = a.facts.integer_interval().unwrap();
                let value = interval_or_wrapped(vt, -high, -low, generic_range);
                // `-MIN` overflows: negate through `wrapping_sub` where MIN is possible.
                let text = if low == integer_range(ty).0 {
                    format!("wrapping_sub(0{}, {})", ty.name(), a.text)
                } else {
                    format!("(-{})", a.text)
                };
                Expr::new(text, vt, Facts::new(a.uniformity(), value))
            }
            9 => {
                let a = self.integer_value(ty, uniformity, inner);
                self.note("integer abs");
                let (low, high) = a.facts.integer_interval().unwrap();
                let (type_low, _) = integer_range(ty);
                let value = if low == type_low && signed {
                    ValueFacts::anything(ty)
                } else if low >= 0 {
                    ValueFacts::interval(low, high)
                } else {
                    ValueFacts::interval(0, low.abs().max(high.abs()))
                };
                Expr::new(
                    format!("abs({})", a.text),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            10 => {
                let (a, b, _) = binary(self, "");
                let minimum = self.percent(50);
                self.note("integer min/max");
                let (ia, ib) = (
                    a.facts.integer_interval().unwrap(),
                    b.facts.integer_interval().unwrap(),
                );
                let value = if minimum {
                    ValueFacts::interval(ia.0.min(ib.0), ia.1.min(ib.1))
                } else {
                    ValueFacts::interval(ia.0.max(ib.0), ia.1.max(ib.1))
                };
                let name = if minimum { "min" } else { "max" };
                Expr::new(
                    format!("{name}({}, {})", a.text, b.text),
                    vt,
                    Facts::new(a.uniformity().join(b.uniformity()), value),
                )
            }
            11 => {
                let a = self.integer_value(ty, uniformity, inner);
                let mut low = self.integer_literal_value(ty);
                let mut high = self.integer_literal_value(ty);
                if low > high {
                    std::mem::swap(&mut low, &mut high);
                }
                self.note("integer clamp");
                let low_text = integer_literal(low, ty, &mut self.random);
                let high_text = integer_literal(high, ty, &mut self.random);
                Expr::new(
                    format!("clamp({}, {low_text}, {high_text})", a.text),
                    vt,
                    interval_facts(a.uniformity(), low, high),
                )
            }
            12 => {
                let condition = self.bool_value(uniformity, inner);
                let (a, b, _) = binary(self, "");
                self.note("select");
                let (ia, ib) = (
                    a.facts.integer_interval().unwrap(),
                    b.facts.integer_interval().unwrap(),
                );
                let uniformity_out = condition
                    .uniformity()
                    .join(a.uniformity())
                    .join(b.uniformity());
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    interval_facts(uniformity_out, ia.0.min(ib.0), ia.1.max(ib.1)),
                )
            }
            13 => {
                let from = self.random_integer_type();
                let a = self.integer_value(from, uniformity, inner);
                self.note("cast integer to integer");
                let value = cast_to_integer(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            14 => {
                let from = self.random_float_type();
                let a = self.float_value(from, FloatNeed::Deterministic, uniformity, inner);
                self.note("cast float to integer");
                let value = cast_to_integer(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            15 => {
                let a = self.bool_value(uniformity, inner);
                self.note("cast bool to integer");
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    interval_facts(a.uniformity(), 0, 1),
                )
            }
            16 => {
                let (low, high) = self.generic_interval();
                let a = self.generic_value(low, high, uniformity, inner);
                self.note("cast T to integer");
                let (type_low, type_high) = integer_range(ty);
                let value = if low >= type_low && high <= type_high {
                    ValueFacts::interval(low, high)
                } else {
                    ValueFacts::anything(ty)
                };
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            17 => self.sub_group_operation(vt, uniformity, inner, OperandBound::Integer),
            18 => {
                let a = self.integer_value(ty, uniformity, inner);
                let name = *self.random.pick(&["popcount", "clz", "ctz", "rotate"]);
                if name == "rotate" {
                    // Any amount: it is taken modulo the width.
                    let amount = self.integer_value(ty, uniformity, inner);
                    self.note("rotate");
                    return Expr::new(
                        format!("rotate({}, {})", a.text, amount.text),
                        vt,
                        Facts::anything(ty, a.uniformity().join(amount.uniformity())),
                    );
                }
                self.note("bit count");
                Expr::new(
                    format!("{name}({})", a.text),
                    vt,
                    interval_facts(a.uniformity(), 0, i128::from(ty.bit_width())),
                )
            }
            _ => self.call(ty, uniformity, inner),
        }
    }

    /// A divisor that is never zero and never -1 (unless this kernel leaves it unguarded),
    /// with the interval it lies in.
    pub(super) fn guarded_divisor(
        &mut self,
        ty: ScalarType,
        divisor: Expr,
    ) -> (Expr, Option<(i128, i128)>) {
        let vt = ValueType::Scalar(ty);
        if self.unguarded && self.percent(10) {
            self.note("unguarded division");
            return (divisor, None);
        }
        let (_, type_high) = integer_range(ty);
        let mask = 127.min(type_high);
        let (text, interval) = match self.random.below(3) {
            0 => (
                format!(
                    "max({}, {})",
                    divisor.text,
                    integer_literal(1, ty, &mut self.random)
                ),
                (1, type_high),
            ),
            1 if !ty.is_signed_integer() => (
                format!(
                    "({} | {})",
                    divisor.text,
                    integer_literal(1, ty, &mut self.random)
                ),
                (1, type_high),
            ),
            _ => (
                format!(
                    "(({} & {}) | {})",
                    divisor.text,
                    integer_literal(mask, ty, &mut self.random),
                    integer_literal(1, ty, &mut self.random)
                ),
                (1, mask),
            ),
        };
        (
            Expr::new(
                text,
                vt,
                interval_facts(divisor.uniformity(), interval.0, interval.1),
            ),
            Some(interval),
        )
    }

    /// `value` forced into `low..=high` (an integer type).
    pub fn fit_integer(&mut self, value: Expr, low: i128, high: i128) -> Expr {
        let ty = value.ty.scalar().expect("a scalar integer");
        if let Some((have_low, have_high)) = value.facts.integer_interval() {
            if have_low >= low && have_high <= high {
                return value;
            }
        }
        let (_, type_high) = integer_range(ty);
        let uniformity = value.uniformity();
        let vt = ValueType::Scalar(ty);
        if low == 0 && !ty.is_signed_integer() && high < type_high && self.percent(50) {
            let modulus = integer_literal(high + 1, ty, &mut self.random);
            return Expr::new(
                format!("({} % {modulus})", value.text),
                vt,
                interval_facts(uniformity, 0, high),
            );
        }
        let low_text = integer_literal(low, ty, &mut self.random);
        let high_text = integer_literal(high, ty, &mut self.random);
        Expr::new(
            format!("clamp({}, {low_text}, {high_text})", value.text),
            vt,
            interval_facts(uniformity, low, high),
        )
    }

    // -----------------------------------------------------------------------------------------
    // Booleans.

    pub fn bool_value(&mut self, uniformity: Uniformity, depth: u32) -> Expr {
        let vt = ValueType::Scalar(ScalarType::Bool);
        let bool_facts = |u| Facts::new(u, ValueFacts::Bool);
        if depth == 0 || self.percent(10) {
            if self.percent(50) {
                if let Some(read) = self.read(vt, uniformity, false, depth) {
                    return read;
                }
            }
            let value = self.percent(50);
            return Expr::new(value.to_string(), vt, bool_facts(Uniformity::WorkGroup));
        }
        let inner = depth - 1;
        // integer comparison, float comparison, T comparison, not, &&/||, &|^, ==/!= on
        // bools, cast to bool, select.
        let weights = [
            12,
            6,
            if self.generic.is_some() { 3 } else { 0 },
            3,
            5,
            3,
            2,
            3,
            2,
        ];
        let comparison = *self.random.pick(&["==", "!=", "<", "<=", ">", ">="]);
        match self.random.weighted(&weights) {
            0 => {
                let ty = self.random_integer_type();
                let a = self.integer_value(ty, uniformity, inner);
                let b = self.integer_value(ty, uniformity, inner);
                self.note("integer comparison");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {comparison} {})", a.text, b.text),
                    vt,
                    bool_facts(u),
                )
            }
            1 => {
                let ty = self.random_float_type();
                let a = self.float_value(ty, FloatNeed::Deterministic, uniformity, inner);
                let b = self.float_value(ty, FloatNeed::Deterministic, uniformity, inner);
                self.note("float comparison");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {comparison} {})", a.text, b.text),
                    vt,
                    bool_facts(u),
                )
            }
            2 => {
                let (low, high) = self.generic_interval();
                let a = self.generic_value(low, high, uniformity, inner);
                let b = self.generic_value(low, high, uniformity, inner);
                self.note("T comparison");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(
                    format!("({} {comparison} {})", a.text, b.text),
                    vt,
                    bool_facts(u),
                )
            }
            3 => {
                let a = self.bool_value(uniformity, inner);
                self.note("logical not");
                Expr::new(format!("(!{})", a.text), vt, bool_facts(a.uniformity()))
            }
            4 => {
                let op = *self.random.pick(&["&&", "||"]);
                let a = self.bool_value(uniformity, inner);
                // The right side runs only where the left does not decide: if the left
                // differs between lanes, so does whether the right runs.
                let saved = self.control;
                if a.uniformity() > Uniformity::WorkGroup {
                    self.control.work_group_uniform = false;
                }
                if a.uniformity() > Uniformity::SubGroup {
                    self.control.sub_group_uniform = false;
                }
                let b = self.bool_value(uniformity, inner);
                self.control = saved;
                self.note("short-circuit logic");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(format!("({} {op} {})", a.text, b.text), vt, bool_facts(u))
            }
            5 => {
                let op = *self.random.pick(&["&", "|", "^"]);
                let a = self.bool_value(uniformity, inner);
                let b = self.bool_value(uniformity, inner);
                self.note("bool bitwise");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(format!("({} {op} {})", a.text, b.text), vt, bool_facts(u))
            }
            6 => {
                let op = *self.random.pick(&["==", "!="]);
                let a = self.bool_value(uniformity, inner);
                let b = self.bool_value(uniformity, inner);
                self.note("bool equality");
                let u = a.uniformity().join(b.uniformity());
                Expr::new(format!("({} {op} {})", a.text, b.text), vt, bool_facts(u))
            }
            7 => {
                let a = if self.percent(50) {
                    let ty = self.random_integer_type();
                    self.integer_value(ty, uniformity, inner)
                } else {
                    let ty = self.random_float_type();
                    self.float_value(ty, FloatNeed::Deterministic, uniformity, inner)
                };
                self.note("cast to bool");
                Expr::new(
                    format!("({} as bool)", a.text),
                    vt,
                    bool_facts(a.uniformity()),
                )
            }
            _ => {
                let condition = self.bool_value(uniformity, inner);
                let a = self.bool_value(uniformity, inner);
                let b = self.bool_value(uniformity, inner);
                self.note("select");
                let u = condition
                    .uniformity()
                    .join(a.uniformity())
                    .join(b.uniformity());
                Expr::new(self.choice(&condition, &a, &b), vt, bool_facts(u))
            }
        }
    }
}
