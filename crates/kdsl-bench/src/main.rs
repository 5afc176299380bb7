//! Placeholder until the runtime's launch API lands.
fn main() {}
