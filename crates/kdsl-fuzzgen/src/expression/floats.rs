//! Float expressions: exact, rounded (deterministic) and approximate values (see docs/fuzzgen.md).

use super::*;

impl Generator<'_> {
    // Floats.

    /// A literal within an exact need.
    pub(super) fn float_literal_within(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        granularity: i32,
    ) -> Expr {
        let literal_granularity = self.random.between(i128::from(granularity.max(-4)), 0) as i32;
        let step = 2f64.powi(literal_granularity);
        let limit = (magnitude / step).floor().clamp(0.0, 64.0) as i128;
        let steps = self.random.between(-limit, limit);
        let value = steps as f64 * step;
        let (magnitude_out, granularity_out) = if value == 0.0 {
            (0.0, 0)
        } else {
            (value.abs(), literal_granularity)
        };
        Expr::new(
            float_literal(value, ty),
            ValueType::Scalar(ty),
            Facts::new(
                Uniformity::WorkGroup,
                ValueFacts::exact(magnitude_out, granularity_out),
            ),
        )
    }

    /// `value` (deterministic) made to fit an exact need.
    pub fn fit_exact(&mut self, value: Expr, magnitude: f64, granularity: i32) -> Expr {
        let ty = value.ty.scalar().expect("a float");
        let vt = value.ty;
        let uniformity = value.uniformity();
        match value.facts.float() {
            Some(FloatFacts::Exact {
                magnitude: have,
                granularity: have_granularity,
            }) if have_granularity >= granularity => {
                if have <= magnitude {
                    return value;
                }
                if magnitude >= 1.0 {
                    let bound = self.random.between(1, magnitude.min(64.0) as i128) as f64;
                    let (text, out) = if self.percent(50) {
                        (
                            format!("({} % {})", value.text, float_literal(bound, ty)),
                            bound,
                        )
                    } else {
                        (
                            format!(
                                "clamp({}, {}, {})",
                                value.text,
                                float_literal(-bound, ty),
                                float_literal(bound, ty)
                            ),
                            bound,
                        )
                    };
                    self.note("exact range reduction");
                    return Expr::new(
                        text,
                        vt,
                        Facts::new(uniformity, ValueFacts::exact(out, have_granularity.min(0))),
                    );
                }
            }
            Some(FloatFacts::Approximate { .. }) | None => {
                return self.float_literal_within(ty, magnitude, granularity);
            }
            _ => {}
        }
        if magnitude < 1.0 || granularity > 0 {
            return self.float_literal_within(ty, magnitude, granularity);
        }
        let bound = self.random.between(1, magnitude.min(1024.0) as i128) as f64;
        let rounding = *self.random.pick(&["floor", "ceil", "round"]);
        self.note("integer-valued range reduction");
        Expr::new(
            format!(
                "clamp({rounding}({}), {}, {})",
                value.text,
                float_literal(-bound, ty),
                float_literal(bound, ty)
            ),
            vt,
            Facts::new(uniformity, ValueFacts::exact(bound, 0)),
        )
    }

    pub fn float_value(
        &mut self,
        ty: ScalarType,
        need: FloatNeed,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        match need {
            FloatNeed::Exact {
                magnitude,
                granularity,
            } => self.exact_float(ty, magnitude, granularity, uniformity, depth),
            FloatNeed::Deterministic => self.deterministic_float(ty, uniformity, depth),
            FloatNeed::Approximate { magnitude } => {
                self.approximate_float(ty, magnitude, uniformity, depth)
            }
        }
    }

    pub(super) fn exact_leaf(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        granularity: i32,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        if self.percent(70) {
            if let Some(read) = self.read(ValueType::Scalar(ty), uniformity, false, depth) {
                return self.fit_exact(read, magnitude, granularity);
            }
        }
        self.float_literal_within(ty, magnitude, granularity)
    }

    pub(super) fn exact_float(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        granularity: i32,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        debug_assert!(exactly_representable(ty, magnitude, granularity));
        if depth == 0 || self.percent(20) {
            return self.exact_leaf(ty, magnitude, granularity, uniformity, depth);
        }
        let inner = depth - 1;
        let exact = |me: &mut Self, m: f64, g: i32| {
            if exactly_representable(ty, m, g) {
                me.exact_float(ty, m, g, uniformity, inner)
            } else {
                me.float_literal_within(ty, m.min(1.0), 0)
            }
        };
        let join = |a: &Expr, b: &Expr| a.uniformity().join(b.uniformity());
        let exact_facts = |e: &Expr| match e.facts.float() {
            Some(FloatFacts::Exact {
                magnitude,
                granularity,
            }) => (magnitude, granularity),
            _ => (0.0, 0),
        };
        let sub_groups = self.sub_group_operations_allowed() && SUB_GROUP_TYPES.contains(&ty);
        let other_float = self
            .value_types()
            .into_iter()
            .filter(|&t| {
                t.is_float() && t != ty && exactly_representable(t, magnitude, granularity)
            })
            .collect::<Vec<_>>();
        // add/sub, mul, fma, neg, abs, min/max, clamp, floor/ceil/round, halving, fmod by a
        // literal, fmod by a guarded value, select, from integer, from float, from bool, from
        // T, sub-group, call.
        let weights = [
            10,
            8,
            3,
            2,
            2,
            4,
            3,
            3,
            if granularity < 0 { 2 } else { 0 },
            2,
            2,
            3,
            6,
            if other_float.is_empty() { 0 } else { 4 },
            1,
            if self.generic.is_some() { 2 } else { 0 },
            if sub_groups { 4 } else { 0 },
            if self.callable(ty).is_empty() { 0 } else { 3 },
        ];
        let result = match self.random.weighted(&weights) {
            0 => {
                let op = *self.random.pick(&["+", "-"]);
                let a = exact(self, magnitude / 2.0, granularity);
                let b = exact(self, magnitude / 2.0, granularity);
                self.note("exact float add/sub");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    format!("({} {op} {})", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma + mb, ga.min(gb))),
                )
            }
            1 => {
                let left_magnitude = 2f64.powi((magnitude.max(1.0).log2() / 2.0).floor() as i32);
                let right_magnitude = magnitude / left_magnitude;
                let left_granularity = granularity / 2;
                let right_granularity = granularity - left_granularity;
                let a = exact(self, left_magnitude, left_granularity);
                let b = exact(self, right_magnitude, right_granularity);
                self.note("exact float multiply");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    format!("({} * {})", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma * mb, ga + gb)),
                )
            }
            2 => {
                let half = magnitude / 2.0;
                let left_magnitude = 2f64.powi((half.max(1.0).log2() / 2.0).floor() as i32);
                let right_magnitude = half / left_magnitude;
                let left_granularity = granularity / 2;
                let right_granularity = granularity - left_granularity;
                let a = exact(self, left_magnitude, left_granularity);
                let b = exact(self, right_magnitude, right_granularity);
                let c = exact(self, half, granularity);
                self.note("exact fma");
                let ((ma, ga), (mb, gb), (mc, gc)) =
                    (exact_facts(&a), exact_facts(&b), exact_facts(&c));
                Expr::new(
                    format!("fma({}, {}, {})", a.text, b.text, c.text),
                    vt,
                    Facts::new(
                        join(&a, &b).join(c.uniformity()),
                        ValueFacts::exact(ma * mb + mc, (ga + gb).min(gc)),
                    ),
                )
            }
            3 => {
                let a = exact(self, magnitude, granularity);
                self.note("float negation");
                Expr::new(format!("(-{})", a.text), vt, a.facts)
            }
            4 => {
                let a = exact(self, magnitude, granularity);
                self.note("float abs");
                Expr::new(format!("abs({})", a.text), vt, a.facts)
            }
            5 => {
                let name = *self.random.pick(&["min", "max"]);
                let a = exact(self, magnitude, granularity);
                let b = exact(self, magnitude, granularity);
                self.note("float min/max");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    format!("{name}({}, {})", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma.max(mb), ga.min(gb))),
                )
            }
            6 => {
                let wide = self.deterministic_float(ty, uniformity, inner);
                self.note("float clamp");
                self.fit_exact(wide, magnitude, granularity)
            }
            7 => {
                let name = *self.random.pick(&["floor", "ceil", "round"]);
                let a = exact(self, (magnitude - 1.0).max(0.0), granularity.max(-4));
                self.note("floor/ceil/round");
                let (ma, _) = exact_facts(&a);
                Expr::new(
                    format!("{name}({})", a.text),
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(ma.ceil(), 0)),
                )
            }
            8 => {
                let shift = self.random.between(1, i128::from(-granularity).min(3)) as i32;
                let scale = 2f64.powi(shift);
                let a = exact(self, magnitude * scale, granularity + shift);
                self.note("exact scaling");
                let (ma, ga) = exact_facts(&a);
                let text = if self.percent(50) {
                    format!("({} / {})", a.text, float_literal(scale, ty))
                } else {
                    format!("({} * {})", a.text, float_literal(1.0 / scale, ty))
                };
                Expr::new(
                    text,
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(ma / scale, ga - shift)),
                )
            }
            9 => {
                let wide = widest_magnitude(ty, granularity).min(magnitude * 64.0);
                let a = exact(self, wide, granularity);
                let divisor_granularity =
                    self.random.between(i128::from(granularity.max(-3)), 0) as i32;
                let step = 2f64.powi(divisor_granularity);
                let steps = self
                    .random
                    .between(1, (magnitude / step).floor().clamp(1.0, 64.0) as i128);
                let divisor_value = steps as f64 * step;
                let divisor = Expr::new(
                    float_literal(divisor_value, ty),
                    vt,
                    Facts::new(
                        Uniformity::WorkGroup,
                        ValueFacts::exact(divisor_value, divisor_granularity),
                    ),
                );
                self.note("float remainder by a constant");
                let ((ma, ga), (md, gd)) = (exact_facts(&a), exact_facts(&divisor));
                let text = format!("({} % {})", a.text, divisor.text);
                Expr::new(
                    text,
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(ma.min(md), ga.min(gd))),
                )
            }
            10 => {
                let a = exact(self, magnitude, granularity);
                let b = exact(self, magnitude, granularity.max(-4));
                self.note("float remainder");
                let (ma, ga) = exact_facts(&a);
                let (_, gb) = exact_facts(&b);
                let offset = float_literal(1.0, ty);
                Expr::new(
                    format!("({} % (abs({}) + {offset}))", a.text, b.text),
                    vt,
                    Facts::new(join(&a, &b), ValueFacts::exact(ma, ga.min(gb).min(0))),
                )
            }
            11 => {
                let condition = self.bool_value(uniformity, inner);
                let a = exact(self, magnitude, granularity);
                let b = exact(self, magnitude, granularity);
                self.note("select");
                let ((ma, ga), (mb, gb)) = (exact_facts(&a), exact_facts(&b));
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    Facts::new(
                        join(&a, &b).join(condition.uniformity()),
                        ValueFacts::exact(ma.max(mb), ga.min(gb)),
                    ),
                )
            }
            12 => {
                let from = self.random_integer_type();
                let a = self.integer_value(from, uniformity, inner);
                let (from_low, from_high) = integer_range(from);
                let limit = (magnitude.min(2f64.powi(precision_bits(ty))).floor() as i128)
                    .min(from_high)
                    .max(0);
                let a = self.fit_integer(a, (-limit).max(from_low), limit);
                self.note("cast integer to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            13 => {
                let from = *self.random.pick(&other_float);
                let a = self.exact_float(from, magnitude, granularity, uniformity, inner);
                self.note("cast float to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            14 => {
                let a = self.bool_value(uniformity, inner);
                self.note("cast bool to float");
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), ValueFacts::exact(1.0, 0)),
                )
            }
            15 => {
                let (low, high) = self.generic_interval();
                let a = self.generic_value(low, high, uniformity, inner);
                self.note("cast T to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            16 => self.sub_group_operation(
                vt,
                uniformity,
                inner,
                OperandBound::Float(magnitude, granularity),
            ),
            _ => self.call(ty, uniformity, inner),
        };
        if result.facts.uniformity > uniformity {
            return self.float_literal_within(ty, magnitude, granularity);
        }
        self.fit_exact(result, magnitude, granularity)
    }

    /// A float that is the same on every target, exact or rounded once.
    pub(super) fn deterministic_float(
        &mut self,
        ty: ScalarType,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        let FloatNeed::Exact {
            magnitude,
            granularity,
        } = default_exact_need(ty)
        else {
            unreachable!()
        };
        if depth == 0 {
            if let Some(read) = self.read(vt, uniformity, false, 0) {
                return read;
            }
            return self.float_literal_within(ty, magnitude, granularity);
        }
        let inner = depth - 1;
        let rounded = |u| Facts::new(u, ValueFacts::Float(FloatFacts::Rounded));
        // exact, read, sqrt, division, wide integer conversion, other float conversion,
        // min/max/abs/neg of deterministic operands, rounding functions.
        let weights = [12, 4, 2, 3, 2, 3, 2, 1];
        match self.random.weighted(&weights) {
            0 => self.exact_float(ty, magnitude, granularity, uniformity, depth),
            1 => self
                .read(vt, uniformity, false, inner)
                .unwrap_or_else(|| self.float_literal_within(ty, magnitude, granularity)),
            2 => {
                let a = self.exact_float(ty, magnitude, granularity, uniformity, inner);
                self.note("sqrt");
                Expr::new(
                    format!("sqrt(abs({}))", a.text),
                    vt,
                    rounded(a.uniformity()),
                )
            }
            3 => {
                let a = self.exact_float(ty, magnitude, granularity, uniformity, inner);
                let b = self.exact_float(ty, magnitude, granularity, uniformity, inner);
                let offset = float_literal(1.0, ty);
                self.note("float division");
                Expr::new(
                    format!("({} / (abs({}) + {offset}))", a.text, b.text),
                    vt,
                    rounded(a.uniformity().join(b.uniformity())),
                )
            }
            4 => {
                let from = self.random_integer_type();
                let a = self.integer_value(from, uniformity, inner);
                self.note("cast integer to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            5 => {
                let from = self.random_float_type();
                let a = self.deterministic_float(from, uniformity, inner);
                self.note("cast float to float");
                let value = cast_to_float(a.facts.value, ty);
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    Facts::new(a.uniformity(), value),
                )
            }
            6 => {
                let a = self.deterministic_float(ty, uniformity, inner);
                let b = self.deterministic_float(ty, uniformity, inner);
                let (text, name) = match self.random.below(4) {
                    0 => (format!("min({}, {})", a.text, b.text), "float min/max"),
                    1 => (format!("max({}, {})", a.text, b.text), "float min/max"),
                    2 => (format!("abs({})", a.text), "float abs"),
                    _ => (format!("(-{})", a.text), "float negation"),
                };
                self.note(name);
                let both_exact = matches!(a.facts.float(), Some(FloatFacts::Exact { .. }))
                    && matches!(b.facts.float(), Some(FloatFacts::Exact { .. }));
                if both_exact && !text.starts_with("min") && !text.starts_with("max") {
                    return Expr::new(text, vt, a.facts);
                }
                Expr::new(text, vt, rounded(a.uniformity().join(b.uniformity())))
            }
            _ => {
                let a = self.deterministic_float(ty, uniformity, inner);
                let name = *self.random.pick(&["floor", "ceil", "round"]);
                self.note("floor/ceil/round");
                Expr::new(format!("{name}({})", a.text), vt, rounded(a.uniformity()))
            }
        }
    }

    /// A float that may carry the error of transcendental math, `|v| <= magnitude`.
    pub(super) fn approximate_float(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        let approximate = |u, magnitude: f64, error: f64| {
            Facts::new(
                u,
                ValueFacts::Float(FloatFacts::Approximate { magnitude, error }),
            )
        };
        // (magnitude, error) of an exact or approximate expression.
        let bounds = |e: &Expr| match e.facts.float() {
            Some(FloatFacts::Exact { magnitude, .. }) => (magnitude, 0.0),
            Some(FloatFacts::Approximate { magnitude, error }) => (magnitude, error),
            _ => (f64::INFINITY, f64::INFINITY),
        };
        let ulp = |m: f64| unit_in_last_place(ty, m);
        if depth == 0 || magnitude < 4.0 {
            return self.exact_float(ty, 1.0, 0, uniformity, 0);
        }
        let inner = depth - 1;
        let (exact_magnitude, exact_granularity) = match default_exact_need(ty) {
            FloatNeed::Exact {
                magnitude,
                granularity,
            } => (magnitude, granularity),
            _ => unreachable!(),
        };
        match self.random.weighted(&[3, 10, 4, 3, 2, 2, 1]) {
            0 => {
                if self.percent(50) {
                    if let Some(read) = self.read(vt, uniformity, true, inner) {
                        if read.facts.is_approximate() && bounds(&read).0 <= magnitude {
                            return read;
                        }
                    }
                }
                self.exact_float(
                    ty,
                    magnitude.min(exact_magnitude),
                    exact_granularity,
                    uniformity,
                    inner,
                )
            }
            1 => self.transcendental(ty, magnitude, uniformity, inner),
            2 => {
                let op = *self.random.pick(&["+", "-"]);
                let a = self.approximate_float(ty, magnitude / 2.0, uniformity, inner);
                let b = self.approximate_float(ty, magnitude / 2.0, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                self.note("approximate add/sub");
                Expr::new(
                    format!("({} {op} {})", a.text, b.text),
                    vt,
                    approximate(
                        a.uniformity().join(b.uniformity()),
                        ma + mb,
                        ea + eb + 2.0 * ulp(ma + mb),
                    ),
                )
            }
            3 => {
                let root = magnitude.sqrt();
                let fused = self.percent(30);
                let a = self.approximate_float(ty, root, uniformity, inner);
                let b = self.approximate_float(ty, root, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                let product = ma * mb;
                let error = ma * eb + mb * ea + ea * eb + 2.0 * ulp(product);
                if fused {
                    let c = self.exact_float(ty, 1.0, 0, uniformity, inner);
                    self.note("approximate fma");
                    return Expr::new(
                        format!("fma({}, {}, {})", a.text, b.text, c.text),
                        vt,
                        approximate(
                            a.uniformity().join(b.uniformity()),
                            product + 1.0,
                            error + 2.0 * ulp(product + 1.0),
                        ),
                    );
                }
                self.note("approximate multiply");
                Expr::new(
                    format!("({} * {})", a.text, b.text),
                    vt,
                    approximate(a.uniformity().join(b.uniformity()), product, error),
                )
            }
            4 => {
                let a = self.approximate_float(ty, magnitude, uniformity, inner);
                let b = self.approximate_float(ty, magnitude, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                let name = *self.random.pick(&["min", "max"]);
                self.note("approximate min/max");
                Expr::new(
                    format!("{name}({}, {})", a.text, b.text),
                    vt,
                    approximate(a.uniformity().join(b.uniformity()), ma.max(mb), ea.max(eb)),
                )
            }
            5 => {
                let condition = self.bool_value(uniformity, inner);
                let a = self.approximate_float(ty, magnitude, uniformity, inner);
                let b = self.approximate_float(ty, magnitude, uniformity, inner);
                let ((ma, ea), (mb, eb)) = (bounds(&a), bounds(&b));
                self.note("select");
                let u = condition
                    .uniformity()
                    .join(a.uniformity())
                    .join(b.uniformity());
                Expr::new(
                    self.choice(&condition, &a, &b),
                    vt,
                    approximate(u, ma.max(mb), ea.max(eb)),
                )
            }
            _ => {
                let from = self.random_float_type();
                let a = self.approximate_float(from, magnitude.min(1000.0), uniformity, inner);
                let (ma, ea) = bounds(&a);
                self.note("approximate conversion");
                Expr::new(
                    format!("({} as {})", a.text, ty.name()),
                    vt,
                    approximate(
                        a.uniformity(),
                        ma,
                        ea + ulp(ma) + unit_in_last_place(from, ma),
                    ),
                )
            }
        }
    }

    /// A math function on an exact argument within its well-conditioned domain.
    pub(super) fn transcendental(
        &mut self,
        ty: ScalarType,
        magnitude: f64,
        uniformity: Uniformity,
        depth: u32,
    ) -> Expr {
        let vt = ValueType::Scalar(ty);
        let literal = |value: f64| float_literal(value, ty);
        let argument = |me: &mut Self, m: f64| me.exact_float(ty, m, -2, uniformity, depth);
        let name = *self.random.pick(&[
            "sin", "cos", "tan", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "pow",
        ]);
        // (text, bound of the result, allowed error in units in the last place)
        let (text, bound, ulps, u) = match name {
            "sin" | "cos" | "tanh" => {
                let x = argument(self, 32.0);
                (format!("{name}({})", x.text), 1.0, 16.0, x.uniformity())
            }
            "tan" => {
                let x = argument(self, 16.0);
                (
                    format!(
                        "tan(clamp({}, {}, {}))",
                        x.text,
                        literal(-1.25),
                        literal(1.25)
                    ),
                    3.1,
                    32.0,
                    x.uniformity(),
                )
            }
            "exp" => {
                let x = argument(self, 16.0);
                (
                    format!(
                        "exp(clamp({}, {}, {}))",
                        x.text,
                        literal(-8.0),
                        literal(8.0)
                    ),
                    2981.0,
                    16.0,
                    x.uniformity(),
                )
            }
            "exp2" => {
                let x = argument(self, 16.0);
                (
                    format!(
                        "exp2(clamp({}, {}, {}))",
                        x.text,
                        literal(-10.0),
                        literal(10.0)
                    ),
                    1024.0,
                    16.0,
                    x.uniformity(),
                )
            }
            "log" | "log2" => {
                let x = argument(self, 60.0);
                (
                    format!("{name}((abs({}) + {}))", x.text, literal(1.0)),
                    6.0,
                    16.0,
                    x.uniformity(),
                )
            }
            "sqrt" => {
                let x = argument(self, 60.0);
                (format!("sqrt(abs({}))", x.text), 8.0, 4.0, x.uniformity())
            }
            "rsqrt" => {
                let x = argument(self, 60.0);
                (
                    format!("rsqrt((abs({}) + {}))", x.text, literal(1.0)),
                    1.0,
                    8.0,
                    x.uniformity(),
                )
            }
            _ => {
                let base = argument(self, 4.0);
                let exponent = argument(self, 3.0);
                (
                    format!(
                        "pow((abs({}) + {}), {})",
                        base.text,
                        literal(0.5),
                        exponent.text
                    ),
                    92.0,
                    64.0,
                    base.uniformity().join(exponent.uniformity()),
                )
            }
        };
        if bound > magnitude {
            return self.exact_float(ty, magnitude.min(1.0), 0, uniformity, 0);
        }
        self.note(match name {
            "sin" => "sin",
            "cos" => "cos",
            "tan" => "tan",
            "exp" => "exp",
            "exp2" => "exp2",
            "log" => "log",
            "log2" => "log2",
            "sqrt" => "sqrt",
            "rsqrt" => "rsqrt",
            "tanh" => "tanh",
            _ => "pow",
        });
        let error = ulps * unit_in_last_place(ty, bound)
            + if matches!(ty, ScalarType::F16 | ScalarType::Bf16) {
                // Computed in f32, whose error may cross a rounding boundary of the narrow type.
                4.0 * unit_in_last_place(ty, bound)
            } else {
                0.0
            };
        Expr::new(
            text,
            vt,
            Facts::new(
                u,
                ValueFacts::Float(FloatFacts::Approximate {
                    magnitude: bound,
                    error,
                }),
            ),
        )
    }
}
