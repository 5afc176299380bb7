//! Property sets, the text of SYCLBIN's metadata: a `[name]` line, then `key=1|decimal` or
//! `key=2|base64` lines.

use super::corrupt;
use crate::{base64, BundleError};

/// A property value: `1|` a 32-bit integer, `2|` a byte array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertyValue {
    U32(u32),
    Bytes(Vec<u8>),
}

/// A named set of properties, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertySet {
    pub name: String,
    pub properties: Vec<(String, PropertyValue)>,
}

impl PropertySet {
    pub fn new(name: impl Into<String>) -> PropertySet {
        PropertySet {
            name: name.into(),
            properties: Vec::new(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&PropertyValue> {
        self.properties
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    pub(super) fn with(mut self, key: impl Into<String>, value: PropertyValue) -> PropertySet {
        self.properties.push((key.into(), value));
        self
    }

    /// With `key` holding `items` comma-separated, unless there are none.
    pub(super) fn with_list(self, key: &str, items: &[String]) -> PropertySet {
        if items.is_empty() {
            return self;
        }
        self.with(key, PropertyValue::Bytes(items.join(",").into_bytes()))
    }
}

/// Property sets as LLVM writes them: `[name]` then `key=type|value`, one per line.
pub fn write_property_sets(sets: &[PropertySet]) -> Vec<u8> {
    let mut text = String::new();
    for set in sets {
        text.push('[');
        text.push_str(&set.name);
        text.push_str("]\n");
        for (key, value) in &set.properties {
            text.push_str(key);
            text.push('=');
            match value {
                PropertyValue::U32(number) => {
                    text.push_str("1|");
                    text.push_str(&number.to_string());
                }
                PropertyValue::Bytes(bytes) => {
                    let mut payload = ((bytes.len() as u64) * 8).to_le_bytes().to_vec();
                    payload.extend_from_slice(bytes);
                    text.push_str("2|");
                    text.push_str(&base64::encode(&payload));
                }
            }
            text.push('\n');
        }
    }
    text.into_bytes()
}

/// Parses property sets written by [`write_property_sets`] (or LLVM).
pub fn parse_property_sets(bytes: &[u8]) -> Result<Vec<PropertySet>, BundleError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| corrupt(format!("property sets are not UTF-8 text: {e}")))?;
    let mut sets: Vec<PropertySet> = Vec::new();
    // Tables are padded with zero bytes; a metadata entry may carry such padding.
    for (number, line) in text.trim_end_matches('\0').lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            let name = name
                .strip_suffix(']')
                .ok_or_else(|| corrupt(format!("property set line {}: no `]`", number + 1)))?;
            sets.push(PropertySet::new(name));
            continue;
        }
        let set = sets.last_mut().ok_or_else(|| {
            corrupt(format!(
                "property set line {}: a property outside any set",
                number + 1
            ))
        })?;
        let (key, typed) = line
            .split_once('=')
            .ok_or_else(|| corrupt(format!("property set line {}: no `=`", number + 1)))?;
        let (kind, value) = typed
            .split_once('|')
            .ok_or_else(|| corrupt(format!("property `{key}`: no `|` after the value type")))?;
        let value = match kind {
            "1" => PropertyValue::U32(value.parse().map_err(|_| {
                corrupt(format!(
                    "property `{key}`: `{value}` is not a 32-bit integer"
                ))
            })?),
            "2" => PropertyValue::Bytes(decode_byte_array(key, value)?),
            other => {
                return Err(corrupt(format!(
                    "property `{key}`: unknown value type `{other}`"
                )))
            }
        };
        set.properties.push((key.to_string(), value));
    }
    Ok(sets)
}

fn decode_byte_array(key: &str, text: &str) -> Result<Vec<u8>, BundleError> {
    let payload =
        base64::decode(text).map_err(|e| corrupt(format!("property `{key}`: bad base64: {e}")))?;
    let (size, bytes) = payload
        .split_first_chunk::<8>()
        .ok_or_else(|| corrupt(format!("property `{key}`: no bit count")))?;
    let bits = u64::from_le_bytes(*size);
    if bits.div_ceil(8) != bytes.len() as u64 {
        return Err(corrupt(format!(
            "property `{key}`: {bits} bits declared, {} bytes present",
            bytes.len()
        )));
    }
    Ok(bytes.to_vec())
}
