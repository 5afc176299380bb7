//! What the generator knows about each value it builds: how uniform it is across work-items,
//! and bounds that make its result the same on every target (see the crate documentation).

use crate::types::{exact_integer_range, float_max, integer_range, precision_bits, ValueType};
use kdsl_ir::ScalarType;

/// Over which work-items a value is the same. Ordered from most to least uniform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Uniformity {
    /// The same in the whole work-group (barriers may depend on it).
    WorkGroup,
    /// The same within each sub-group (sub-group operations may depend on it).
    SubGroup,
    /// May differ between any two work-items.
    Varying,
}

impl Uniformity {
    /// The uniformity of a value computed from both.
    pub fn join(self, other: Uniformity) -> Uniformity {
        self.max(other)
    }
}

/// What is known about a float value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatFacts {
    /// Computed without any rounding: `|v| <= magnitude` and `v` is a multiple of
    /// `2^granularity`, and every such value is representable, so every target gives the same
    /// bits whatever it contracts or reorders.
    Exact { magnitude: f64, granularity: i32 },
    /// One correctly rounded operation away from exact inputs (a division, `sqrt`, a
    /// rounding conversion): the same on every target by the documented semantics, never
    /// NaN, maybe infinite. Further arithmetic on it is not allowed, since a product feeding
    /// an addition may be contracted into an `fma` on some targets and not on others.
    Rounded,
    /// Within `error` of the reference result, `|v| <= magnitude`: transcendental math.
    /// Only continuous operations may use it, and only float outputs compared with a
    /// tolerance receive it.
    Approximate { magnitude: f64, error: f64 },
}

/// What is known about a value of any type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueFacts {
    Bool,
    /// An integer (or a generic `T` value) in `low..=high`.
    Integer {
        low: i128,
        high: i128,
    },
    Float(FloatFacts),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Facts {
    pub uniformity: Uniformity,
    pub value: ValueFacts,
}

impl Facts {
    pub fn new(uniformity: Uniformity, value: ValueFacts) -> Facts {
        Facts { uniformity, value }
    }

    /// Nothing known beyond the type: the type's whole range, or a rounded float.
    pub fn anything(ty: ScalarType, uniformity: Uniformity) -> Facts {
        Facts::new(uniformity, ValueFacts::anything(ty))
    }

    pub fn integer_interval(&self) -> Option<(i128, i128)> {
        match self.value {
            ValueFacts::Integer { low, high } => Some((low, high)),
            ValueFacts::Bool => Some((0, 1)),
            ValueFacts::Float(_) => None,
        }
    }

    pub fn float(&self) -> Option<FloatFacts> {
        match self.value {
            ValueFacts::Float(facts) => Some(facts),
            _ => None,
        }
    }

    pub fn is_approximate(&self) -> bool {
        matches!(
            self.value,
            ValueFacts::Float(FloatFacts::Approximate { .. })
        )
    }
}

impl ValueFacts {
    pub fn anything(ty: ScalarType) -> ValueFacts {
        if ty == ScalarType::Bool {
            ValueFacts::Bool
        } else if ty.is_float() {
            ValueFacts::Float(FloatFacts::Rounded)
        } else {
            let (low, high) = integer_range(ty);
            ValueFacts::Integer { low, high }
        }
    }

    pub fn interval(low: i128, high: i128) -> ValueFacts {
        ValueFacts::Integer { low, high }
    }

    pub fn exact(magnitude: f64, granularity: i32) -> ValueFacts {
        ValueFacts::Float(FloatFacts::Exact {
            magnitude,
            granularity,
        })
    }
}

/// Whether every multiple of `2^granularity` of magnitude at most `magnitude` is a finite
/// value of `ty` and no such value but zero is subnormal.
pub fn exactly_representable(ty: ScalarType, magnitude: f64, granularity: i32) -> bool {
    let precision = precision_bits(ty);
    magnitude <= 2f64.powi(granularity + precision)
        && magnitude <= float_max(ty)
        && granularity >= -12
}

/// The interval of an integer result, or the type's whole range if it might wrap.
pub fn interval_or_wrapped(
    ty: ValueType,
    low: i128,
    high: i128,
    generic_range: (i128, i128),
) -> ValueFacts {
    let (type_low, type_high) = match ty {
        ValueType::Scalar(scalar) => integer_range(scalar),
        ValueType::Generic => generic_range,
    };
    if low >= type_low && high <= type_high {
        ValueFacts::interval(low, high)
    } else {
        ValueFacts::interval(type_low, type_high)
    }
}

/// The interval a value of facts `facts` has after converting to the integer type `to`.
pub fn cast_to_integer(facts: ValueFacts, to: ScalarType) -> ValueFacts {
    let (type_low, type_high) = integer_range(to);
    let (low, high) = match facts {
        ValueFacts::Bool => (0, 1),
        ValueFacts::Integer { low, high } => {
            if low >= type_low && high <= type_high {
                (low, high)
            } else {
                (type_low, type_high)
            }
        }
        // Float to integer truncates and saturates.
        ValueFacts::Float(FloatFacts::Exact { magnitude, .. }) => {
            let limit = magnitude.floor().min(1e30) as i128;
            (-limit, limit)
        }
        ValueFacts::Float(_) => (type_low, type_high),
    };
    ValueFacts::interval(
        low.clamp(type_low, type_high),
        high.clamp(type_low, type_high),
    )
}

/// The facts of `value as to` for a float type `to`.
pub fn cast_to_float(facts: ValueFacts, to: ScalarType) -> ValueFacts {
    match facts {
        ValueFacts::Bool => ValueFacts::exact(1.0, 0),
        ValueFacts::Integer { low, high } => {
            let magnitude = low.unsigned_abs().max(high.unsigned_abs()) as f64;
            let (exact_low, exact_high) = exact_integer_range(to);
            if low >= exact_low && high <= exact_high && magnitude <= float_max(to) {
                ValueFacts::exact(magnitude, 0)
            } else {
                ValueFacts::Float(FloatFacts::Rounded)
            }
        }
        ValueFacts::Float(FloatFacts::Exact {
            magnitude,
            granularity,
        }) => {
            if exactly_representable(to, magnitude, granularity) {
                ValueFacts::exact(magnitude, granularity)
            } else {
                ValueFacts::Float(FloatFacts::Rounded)
            }
        }
        ValueFacts::Float(FloatFacts::Rounded) => ValueFacts::Float(FloatFacts::Rounded),
        ValueFacts::Float(FloatFacts::Approximate { magnitude, error }) => {
            ValueFacts::Float(FloatFacts::Approximate {
                magnitude,
                error: error + crate::types::unit_in_last_place(to, magnitude),
            })
        }
    }
}
