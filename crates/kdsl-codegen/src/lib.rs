//! LLVM code generation. Placeholder until the lowering lands.
