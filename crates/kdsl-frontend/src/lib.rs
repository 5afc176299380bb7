//! The kdsl front end. Placeholder until the parser lands.
