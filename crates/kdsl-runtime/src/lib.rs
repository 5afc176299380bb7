//! The kdsl runtime. Placeholder until the backends land.
