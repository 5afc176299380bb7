//! Every diagnostic code kdsl reports, in one enum: `Diagnostic::code` is one of these, written
//! as its stable text (`E0301`) when rendered or serialized. docs/language.md's table of codes
//! lists exactly these (a test in kdsl-frontend checks it).

use std::fmt;

/// A diagnostic's stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// An invalid character in the source.
    E0001,
    /// An unterminated block comment.
    E0002,
    /// Brackets or expressions nested deeper than 256 levels, operator chains of more than 256
    /// operands.
    E0004,
    /// A syntax error.
    E0101,
    /// An unexpected end of file.
    E0102,
    /// An unknown name.
    E0201,
    /// An unknown function.
    E0202,
    /// An unknown type.
    E0203,
    /// A duplicate definition or parameter.
    E0204,
    /// A name taken by a built-in.
    E0205,
    /// A name that is not a value (a buffer, an array, a function).
    E0206,
    /// A value that cannot be indexed.
    E0207,
    /// Generic kernel and instance problems, generic device functions.
    E0208,
    /// Record problems: an unknown field, a field of an unsupported type, a record used
    /// where a scalar is expected or outside a buffer.
    E0209,
    /// Mismatched types.
    E0301,
    /// Invalid operand types.
    E0302,
    /// An invalid cast.
    E0303,
    /// A condition that is not `bool`.
    E0304,
    /// A literal out of range.
    E0305,
    /// A float literal where an integer is expected.
    E0306,
    /// A wrong number of arguments.
    E0307,
    /// A wrong index count or a non-integer index.
    E0308,
    /// Math function argument types.
    E0309,
    /// Atomic argument types.
    E0310,
    /// Sub-group argument types.
    E0311,
    /// The result of a function without one used.
    E0312,
    /// A wrong buffer argument.
    E0313,
    /// A tuple where a scalar is expected or the reverse, a tuple of the wrong length, or a
    /// tuple field that does not exist.
    E0314,
    /// A vector where a scalar is expected or the reverse, vectors of different types in one
    /// operation, a component that does not exist, or a repeated operand with side effects.
    E0315,
    /// `print` misuse: a format that is not a string literal, unbalanced braces, a placeholder
    /// count that differs from the values, a value that cannot be printed; a string literal
    /// anywhere else.
    E0330,
    /// A matrix operation's tile or memory operand of a shape or type no matrix shape has, or a
    /// matrix group's depth that is not a constant multiple of 16.
    E0340,
    /// An asynchronous copy's operand: a destination outside local memory, a source outside a
    /// global buffer, different element types, a count that is not a constant the copy allows.
    E0341,
    /// A tile copy's operand: a destination outside local memory, a source that is not a 2-D
    /// buffer's element, different element types, rows or a slot that are not constants the
    /// copy allows.
    E0342,
    /// Assignment to an immutable binding.
    E0401,
    /// A write to a read-only buffer.
    E0402,
    /// An invalid atomic place.
    E0403,
    /// An invalid assignment target.
    E0404,
    /// One array passed twice to a call that may write it.
    E0405,
    /// A misplaced `local` array.
    E0501,
    /// An invalid array length.
    E0502,
    /// An invalid work-item dimension.
    E0503,
    /// `break` or `continue` outside a loop.
    E0504,
    /// A missing return.
    E0505,
    /// A kernel with a return type.
    E0506,
    /// An invalid `return`.
    E0507,
    /// Recursion.
    E0508,
    /// A non-constant or cyclic constant.
    E0509,
    /// Undefined behaviour in a constant: division by zero, `MIN / -1`.
    E0510,
    /// An expression statement without effect.
    E0511,
    /// A non-positive `for` step.
    E0512,
    /// `barrier` or kernel misuse.
    E0513,
    /// An unknown, malformed, repeated or misplaced attribute; a work-group size below 1.
    E0514,
    /// An `unroll(N)` factor that is not a constant from 1 to 1024.
    E0515,
    /// Integer overflow of `+ - *` or negation in a constant expression.
    E0516,
    /// A constant index outside a fixed-size private or local array.
    E0517,
    /// A `barrier()` (or work-group collective) that not every work-item of the work-group
    /// reaches: under control flow that depends on work-item ids or data.
    E0518,
    /// A sub-group operation that not every work-item of the sub-group reaches.
    E0519,
    /// A warning: a tile copy or store in a device function, so the module's tile statements
    /// take the plain path on every target.
    W0342,
    /// A warning: `unroll` on a loop whose trip count is not a compile-time constant.
    W0516,
    /// A feature the chosen target does not support.
    E0601,
    /// Local memory above the target's limit.
    E0602,
    /// Kernel parameters above the target's limit on argument bytes.
    E0603,
    /// Private arrays above the target's limit on a work-item's memory.
    E0604,
    /// A `-D` definition that names no module constant.
    E0701,
    /// A `-D` value of the wrong type or not a literal.
    E0702,
    /// A `-D` value out of the constant's range.
    E0703,
    /// One constant given two values.
    E0704,
    /// A target or tool problem: unknown processor, missing `llc`, `ld.lld`, libdevice or libclc.
    E0801,
    /// An internal compiler error in the front end.
    E0901,
    /// An internal compiler error in code generation.
    E0902,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 70] = [
        ErrorCode::E0001,
        ErrorCode::E0002,
        ErrorCode::E0004,
        ErrorCode::E0101,
        ErrorCode::E0102,
        ErrorCode::E0201,
        ErrorCode::E0202,
        ErrorCode::E0203,
        ErrorCode::E0204,
        ErrorCode::E0205,
        ErrorCode::E0206,
        ErrorCode::E0207,
        ErrorCode::E0208,
        ErrorCode::E0209,
        ErrorCode::E0301,
        ErrorCode::E0302,
        ErrorCode::E0303,
        ErrorCode::E0304,
        ErrorCode::E0305,
        ErrorCode::E0306,
        ErrorCode::E0307,
        ErrorCode::E0308,
        ErrorCode::E0309,
        ErrorCode::E0310,
        ErrorCode::E0311,
        ErrorCode::E0312,
        ErrorCode::E0313,
        ErrorCode::E0314,
        ErrorCode::E0315,
        ErrorCode::E0330,
        ErrorCode::E0340,
        ErrorCode::E0341,
        ErrorCode::E0342,
        ErrorCode::E0401,
        ErrorCode::E0402,
        ErrorCode::E0403,
        ErrorCode::E0404,
        ErrorCode::E0405,
        ErrorCode::E0501,
        ErrorCode::E0502,
        ErrorCode::E0503,
        ErrorCode::E0504,
        ErrorCode::E0505,
        ErrorCode::E0506,
        ErrorCode::E0507,
        ErrorCode::E0508,
        ErrorCode::E0509,
        ErrorCode::E0510,
        ErrorCode::E0511,
        ErrorCode::E0512,
        ErrorCode::E0513,
        ErrorCode::E0514,
        ErrorCode::E0515,
        ErrorCode::E0516,
        ErrorCode::E0517,
        ErrorCode::E0518,
        ErrorCode::E0519,
        ErrorCode::W0342,
        ErrorCode::W0516,
        ErrorCode::E0601,
        ErrorCode::E0602,
        ErrorCode::E0603,
        ErrorCode::E0604,
        ErrorCode::E0701,
        ErrorCode::E0702,
        ErrorCode::E0703,
        ErrorCode::E0704,
        ErrorCode::E0801,
        ErrorCode::E0901,
        ErrorCode::E0902,
    ];

    /// The code as written in diagnostics and docs, such as `E0509`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::E0001 => "E0001",
            ErrorCode::E0002 => "E0002",
            ErrorCode::E0004 => "E0004",
            ErrorCode::E0101 => "E0101",
            ErrorCode::E0102 => "E0102",
            ErrorCode::E0201 => "E0201",
            ErrorCode::E0202 => "E0202",
            ErrorCode::E0203 => "E0203",
            ErrorCode::E0204 => "E0204",
            ErrorCode::E0205 => "E0205",
            ErrorCode::E0206 => "E0206",
            ErrorCode::E0207 => "E0207",
            ErrorCode::E0208 => "E0208",
            ErrorCode::E0209 => "E0209",
            ErrorCode::E0301 => "E0301",
            ErrorCode::E0302 => "E0302",
            ErrorCode::E0303 => "E0303",
            ErrorCode::E0304 => "E0304",
            ErrorCode::E0305 => "E0305",
            ErrorCode::E0306 => "E0306",
            ErrorCode::E0307 => "E0307",
            ErrorCode::E0308 => "E0308",
            ErrorCode::E0309 => "E0309",
            ErrorCode::E0310 => "E0310",
            ErrorCode::E0311 => "E0311",
            ErrorCode::E0312 => "E0312",
            ErrorCode::E0313 => "E0313",
            ErrorCode::E0314 => "E0314",
            ErrorCode::E0315 => "E0315",
            ErrorCode::E0330 => "E0330",
            ErrorCode::E0340 => "E0340",
            ErrorCode::E0341 => "E0341",
            ErrorCode::E0342 => "E0342",
            ErrorCode::E0401 => "E0401",
            ErrorCode::E0402 => "E0402",
            ErrorCode::E0403 => "E0403",
            ErrorCode::E0404 => "E0404",
            ErrorCode::E0405 => "E0405",
            ErrorCode::E0501 => "E0501",
            ErrorCode::E0502 => "E0502",
            ErrorCode::E0503 => "E0503",
            ErrorCode::E0504 => "E0504",
            ErrorCode::E0505 => "E0505",
            ErrorCode::E0506 => "E0506",
            ErrorCode::E0507 => "E0507",
            ErrorCode::E0508 => "E0508",
            ErrorCode::E0509 => "E0509",
            ErrorCode::E0510 => "E0510",
            ErrorCode::E0511 => "E0511",
            ErrorCode::E0512 => "E0512",
            ErrorCode::E0513 => "E0513",
            ErrorCode::E0514 => "E0514",
            ErrorCode::E0515 => "E0515",
            ErrorCode::E0516 => "E0516",
            ErrorCode::E0517 => "E0517",
            ErrorCode::E0518 => "E0518",
            ErrorCode::E0519 => "E0519",
            ErrorCode::W0342 => "W0342",
            ErrorCode::W0516 => "W0516",
            ErrorCode::E0601 => "E0601",
            ErrorCode::E0602 => "E0602",
            ErrorCode::E0603 => "E0603",
            ErrorCode::E0604 => "E0604",
            ErrorCode::E0701 => "E0701",
            ErrorCode::E0702 => "E0702",
            ErrorCode::E0703 => "E0703",
            ErrorCode::E0704 => "E0704",
            ErrorCode::E0801 => "E0801",
            ErrorCode::E0901 => "E0901",
            ErrorCode::E0902 => "E0902",
        }
    }

    /// The code written `text`, if there is one.
    pub fn from_name(text: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == text)
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tests and callers compare codes with their text: `diagnostic.code == "E0601"`.
impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Serialized as its text, so the format is the one the codes had as strings.
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        ErrorCode::from_name(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown diagnostic code `{text}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn codes_are_written_and_read_as_their_text() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{code}\""));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), code);
        }
        assert!(serde_json::from_str::<ErrorCode>("\"E9999\"").is_err());
        assert!(ErrorCode::E0601 == "E0601" && ErrorCode::W0516 != "E0516");
    }
}
