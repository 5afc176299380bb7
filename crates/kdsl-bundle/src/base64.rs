//! The base64 variant LLVM's property sets use for byte-array values (`2|...`).
//!
//! It uses the standard alphabet (`A-Z a-z 0-9 + /`) but reads the input as one little-endian
//! bit stream: each character carries the next six bits, least significant bit first, and
//! there is no `=` padding. So `n` bytes take `ceil(8n / 6)` characters, and a final
//! character may carry unused high bits, which must be zero. This is not RFC 4648 base64.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Why a string is not valid in this encoding.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("byte {byte:#04x} at position {position} is not a base64 character")]
    InvalidCharacter { position: usize, byte: u8 },
    #[error("{length} characters cannot encode whole bytes")]
    InvalidLength { length: usize },
    #[error("the last character carries bits beyond the last byte")]
    TrailingBits,
}

/// Encodes `bytes`, six bits per character, least significant bits first.
pub fn encode(bytes: &[u8]) -> String {
    let mut text = String::with_capacity((bytes.len() * 8).div_ceil(6));
    let mut accumulator = 0u32;
    let mut bits = 0u32;
    for &byte in bytes {
        accumulator |= u32::from(byte) << bits;
        bits += 8;
        while bits >= 6 {
            text.push(char::from(ALPHABET[(accumulator & 0x3f) as usize]));
            accumulator >>= 6;
            bits -= 6;
        }
    }
    if bits > 0 {
        text.push(char::from(ALPHABET[(accumulator & 0x3f) as usize]));
    }
    text
}

fn value_of(byte: u8) -> Option<u32> {
    let value = match byte {
        b'A'..=b'Z' => byte - b'A',
        b'a'..=b'z' => byte - b'a' + 26,
        b'0'..=b'9' => byte - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    };
    Some(u32::from(value))
}

/// Decodes what [`encode`] writes. Rejects foreign characters, a length that no byte count
/// encodes to, and nonzero leftover bits.
pub fn decode(text: &str) -> Result<Vec<u8>, DecodeError> {
    let input = text.as_bytes();
    let byte_count = input.len() * 6 / 8;
    if (byte_count * 8).div_ceil(6) != input.len() {
        return Err(DecodeError::InvalidLength {
            length: input.len(),
        });
    }
    let mut bytes = Vec::with_capacity(byte_count);
    let mut accumulator = 0u32;
    let mut bits = 0u32;
    for (position, &character) in input.iter().enumerate() {
        let value = value_of(character).ok_or(DecodeError::InvalidCharacter {
            position,
            byte: character,
        })?;
        accumulator |= value << bits;
        bits += 6;
        if bits >= 8 {
            bytes.push((accumulator & 0xff) as u8);
            accumulator >>= 8;
            bits -= 8;
        }
    }
    if accumulator != 0 {
        return Err(DecodeError::TrailingBits);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_six_bits_per_character_least_significant_first() {
        // 0x01: the low six bits (1) give 'B', the remaining two bits (0) give 'A'.
        assert_eq!(encode(&[0x01]), "BA");
        // 0xff: 63 gives '/', the top two bits (3) give 'D'.
        assert_eq!(encode(&[0xff]), "/D");
        // Three bytes fill exactly four characters.
        assert_eq!(encode(&[0x00, 0x00, 0x00]).len(), 4);
        assert_eq!(encode(&[]), "");
        // A property value: the 64-bit little-endian bit count 40, then "sm_90" (RFC 4648
        // base64 would give "KAAAAAAAAABzbV85MA==").
        let mut value = 40u64.to_le_bytes().to_vec();
        value.extend_from_slice(b"sm_90");
        assert_eq!(encode(&value), "oAAAAAAAAAwct9VOwA");
        assert_eq!(decode("oAAAAAAAAAwct9VOwA").unwrap(), value);
    }

    #[test]
    fn round_trips_every_length_and_byte_value() {
        for length in 0..40usize {
            let bytes: Vec<u8> = (0..length)
                .map(|i| (i as u8).wrapping_mul(97).wrapping_add(length as u8))
                .collect();
            let text = encode(&bytes);
            assert_eq!(text.len(), (length * 8).div_ceil(6));
            assert_eq!(decode(&text).unwrap(), bytes, "length {length}");
        }
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(decode(&encode(&all)).unwrap(), all);
    }

    #[test]
    fn rejects_malformed_text() {
        assert_eq!(
            decode("AB=A"),
            Err(DecodeError::InvalidCharacter {
                position: 2,
                byte: b'='
            })
        );
        assert_eq!(decode("A"), Err(DecodeError::InvalidLength { length: 1 }));
        assert_eq!(
            decode("AAAAA"),
            Err(DecodeError::InvalidLength { length: 5 })
        );
        // 'E' is 4: bit 2 of the second character lies beyond the one byte.
        assert_eq!(decode("AE"), Err(DecodeError::TrailingBits));
    }
}
