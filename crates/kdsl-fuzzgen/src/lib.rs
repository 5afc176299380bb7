//! A random well-typed kernel generator for kdsl, in the style of Cranelift's fuzzgen.
//!
//! [`generate`] turns a seed into a `.krn` module that the front end accepts by construction
//! (typed expression trees over every scalar type, only what docs/language.md allows), plus
//! everything needed to run it: each kernel's launch shape, its arguments with deterministic
//! data, and how each output is compared ([`KernelRun`]).
//!
//! # Results that agree on every target
//!
//! Every value the generator builds carries facts ([`facts`]): how uniform it is across
//! work-items, integer intervals, and for floats one of three classes:
//!
//! - **exact**: a bounded multiple of a power of two, so every `+ - * fma`, conversion,
//!   `min`/`max`/`abs`/`clamp`, `floor`/`ceil`/`round`, remainder and sub-group reduction is
//!   computed without rounding, whatever a target contracts or reorders;
//! - **rounded**: one correctly rounded operation on exact values (division, `sqrt`, a
//!   conversion that rounds), the same everywhere by the documented semantics, used only by
//!   comparisons, conversions, `min`/`max`-like operations and stores (never by arithmetic,
//!   which might be contracted into an `fma` on one target and not another);
//! - **approximate**: transcendental math (`sin exp log pow tanh rsqrt ...`) on exact
//!   arguments in a well-conditioned range, then continuous operations, with an absolute
//!   error bound carried along; only a dedicated float output receives them, compared within
//!   four times the bound.
//!
//! Integer `+ - *` and negation must not overflow: the generator writes them where the
//! operands' intervals keep the result in range and `wrapping_add`/`_sub`/`_mul` elsewhere.
//! Shifts mask their amount and float-to-integer conversions saturate, so only division,
//! remainder and indexing can be undefined; the generator guards them (`x / ((y & 127) | 1)`,
//! `% len`). With [`GeneratorOptions::possibly_undefined_percent`] some kernels
//! keep a few unguarded divisions and indices, which the interpreter reports; such runs are
//! skipped in the differential comparison and counted.
//!
//! Races are avoided by construction: each work-item writes only its own output slots; local
//! arrays are written slot by slot between barriers; contended atomics use one commutative
//! operation per buffer and their results are not read back; sub-group operations sit only
//! in control flow the whole sub-group takes, and their results depend on the sub-group size,
//! which the kernel stores for the interpreter to use ([`KernelRun::sub_group_size_probe`]).

pub mod compare;
mod expression;
pub mod facts;
mod function;
mod generator;
mod groups;
mod kernel;
pub mod pack;
pub mod random;
pub mod run;
mod scope;
mod statement;
mod tiles;
pub mod types;

pub mod device;

#[cfg(feature = "compiler")]
pub mod check;
#[cfg(feature = "interpreter")]
pub mod reference;

pub use compare::{compare_outputs, Outputs};
pub use run::{ArgumentValue, Comparison, KernelRun, RunArgument};

use std::collections::BTreeMap;

/// What the generator may use. Every construct is on by default.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratorOptions {
    /// Statements in a kernel body (nested ones included), at most.
    pub max_statements: u32,
    /// Statements in one block, at most.
    pub block_statements: u32,
    /// Nesting of `if` and loops, at most.
    pub max_block_depth: u32,
    /// Operator depth of one expression, at most.
    pub expression_depth: u32,
    /// Statements in a device function body, at most.
    pub function_statements: u32,
    pub f16: bool,
    /// `bf16` values, buffers and scalar parameters.
    pub bf16: bool,
    pub f64: bool,
    /// `f16` buffers and scalar parameters (not only `f16` values inside kernels).
    pub f16_parameters: bool,
    pub sub_groups: bool,
    /// Local arrays and barriers.
    pub local_memory: bool,
    pub private_arrays: bool,
    /// 2-D input buffers (`global [[T]]`, row- or column-major) read as `a[i, j]`, and their
    /// `a.shape(k)`.
    pub multi_dimensional_buffers: bool,
    /// 3-D buffers (`global [[[T]]]`, read, and written where outputs are multi-dimensional).
    pub three_dimensional_buffers: bool,
    /// Writable multi-dimensional outputs (`global mut [[T]]`): each work-item writes and reads
    /// its own row, column or plane, in row-major, strided or padded layouts.
    pub multi_dimensional_outputs: bool,
    /// A module `struct` of 2 to 4 scalar fields as a buffer element: input records read by
    /// field or whole, output records written by field, whole, by copy and with atomics.
    pub record_buffers: bool,
    /// Launch-sized local arrays (`local mut [T]` kernel parameters, length given at launch).
    pub launch_sized_local_arrays: bool,
    /// 2-D local arrays (`local tile: [[T; C]; R]`), exchanged like the flat ones.
    pub two_dimensional_local_arrays: bool,
    /// Flat local arrays filled from an input with `async_copy`, `async_commit` and
    /// `async_wait` (`cp.async` on the H200, plain copies elsewhere).
    pub async_copies: bool,
    /// Vector loads (`vload2`..`vload4`) of input buffers and vector arithmetic.
    pub vectors: bool,
    /// One seed in ten gives a module on sub-group matrix tiles (`tiles.rs`) instead.
    pub matrix_tiles: bool,
    /// Another one in ten gives a module on matrix-group tiles (`groups.rs`).
    pub matrix_groups: bool,
    pub atomics: bool,
    /// `atomic_add` on `f32` and `f64`.
    pub float_atomics: bool,
    pub device_functions: bool,
    pub generics: bool,
    /// Transcendental math into an output compared with a tolerance.
    pub approximate_math: bool,
    /// The percentage of kernels that keep some divisions and indices unguarded.
    pub possibly_undefined_percent: u64,
    /// Constructs left out because they meet a known compiler bug.
    pub known_bugs: KnownBugs,
}

/// Switches that keep the generator away from bugs it found that are not fixed in this tree
/// (all in Intel's OpenCL CPU device), so the bounded test stays green. Each is on in [`GeneratorOptions::default`] and off in
/// [`GeneratorOptions::with_known_bugs`]; docs/fuzzgen.md describes each bug.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownBugs {
    /// Intel's OpenCL CPU device: a work-item that stores to a `noalias` (`restrict`) global
    /// buffer, passes a barrier and loads the same element back gets the value another
    /// work-item stored (that of the last vectorized chunk of the group); kdsl marks every
    /// buffer parameter `noalias`. OpenCL C with `restrict` shows the same. In kernels with
    /// barriers the generator does not read back, or atomically update, output elements.
    pub avoid_intel_cpu_noalias_reload_after_barrier: bool,
    /// Intel's OpenCL CPU device (SPIR-V input): a kernel crashes (SIGSEGV inside the
    /// compiled kernel) when it loads from a buffer at an index that is a `min` (or `clamp`)
    /// of a value read from local memory and uses the loaded value after a barrier
    /// (`let v = input[min(shared[15], 42u32)]; barrier(); out[i] = v;`); clang's SPIR-V of
    /// the same OpenCL C crashes too, the OpenCL C source compiled by the driver does not.
    /// In kernels with barriers the generator makes no index a `min` or `clamp`.
    pub avoid_intel_cpu_minimum_index_across_barrier: bool,
    /// Intel's OpenCL CPU device (SPIR-V input, -O0 images): a zero-initialized private array
    /// holds garbage when the function converts a float to an integer after declaring it
    /// (`let mut a: [f32; 5]; let c = (n as f64) as u32; out[i] = a[n % 5u32] + (c as f32);`
    /// gives NaN); clang's -O0 SPIR-V of the same OpenCL C (`convert_uint_sat`) shows it too.
    /// The generator uses private arrays or float-to-integer conversions in a module, not both.
    pub avoid_intel_cpu_o0_private_array_with_float_to_integer: bool,
    /// Intel's OpenCL CPU device (SPIR-V input, its vectorizer on): a private array that is
    /// only ever zero-filled, read at a varying index, gives garbage, nondeterministically
    /// (seeds 1000570, 1002011, 1002227; `never_written_private_array.krn` in
    /// benchmarks/results/2026-12-02-long-run/reduced/); any non-zero store to it
    /// avoids it. The generator stores a 1 to element 0 of every array it does not fill.
    pub avoid_intel_cpu_never_written_private_array: bool,
    /// Intel's OpenCL CPU device (SPIR-V input, -O3): its compiler crashes (SIGSEGV in
    /// `instcombine`) on a kernel that stores an `f16` into a 2-D output, passes a barrier and
    /// compares a negated `f16` load (docs/fuzzgen.md). Kernels with barriers get no `f16`
    /// multi-dimensional outputs.
    pub avoid_intel_cpu_f16_multi_dimensional_output_with_barrier: bool,
    /// Intel's OpenCL CPU device (SPIR-V input, -O0 and -O3): once a work-group's
    /// `atomic_min` or `atomic_max` on local memory has run with a kernel argument `n` as its
    /// value, an unrelated earlier store of `(0x8000 | n) - n` holds 0 (seed 9548; clang's
    /// SPIR-V of the same OpenCL C, which calls the `atomic_min` built-in, is right). Local
    /// atomics are not `atomic_min` or `atomic_max`.
    pub avoid_intel_cpu_local_atomic_min_max: bool,
}

impl KnownBugs {
    pub fn avoid_all() -> KnownBugs {
        KnownBugs {
            avoid_intel_cpu_noalias_reload_after_barrier: true,
            avoid_intel_cpu_minimum_index_across_barrier: true,
            avoid_intel_cpu_o0_private_array_with_float_to_integer: true,
            avoid_intel_cpu_never_written_private_array: true,
            avoid_intel_cpu_f16_multi_dimensional_output_with_barrier: true,
            avoid_intel_cpu_local_atomic_min_max: true,
        }
    }

    pub fn avoid_none() -> KnownBugs {
        KnownBugs {
            avoid_intel_cpu_noalias_reload_after_barrier: false,
            avoid_intel_cpu_minimum_index_across_barrier: false,
            avoid_intel_cpu_o0_private_array_with_float_to_integer: false,
            avoid_intel_cpu_never_written_private_array: false,
            avoid_intel_cpu_f16_multi_dimensional_output_with_barrier: false,
            avoid_intel_cpu_local_atomic_min_max: false,
        }
    }
}

impl GeneratorOptions {
    /// The defaults without avoiding known bugs: for runs that look for them.
    pub fn with_known_bugs() -> GeneratorOptions {
        GeneratorOptions {
            known_bugs: KnownBugs::avoid_none(),
            ..GeneratorOptions::default()
        }
    }
}

impl Default for GeneratorOptions {
    fn default() -> Self {
        GeneratorOptions {
            max_statements: 28,
            block_statements: 4,
            max_block_depth: 3,
            expression_depth: 4,
            function_statements: 4,
            f16: true,
            bf16: true,
            f64: true,
            f16_parameters: true,
            sub_groups: true,
            local_memory: true,
            private_arrays: true,
            multi_dimensional_buffers: true,
            three_dimensional_buffers: true,
            multi_dimensional_outputs: true,
            record_buffers: true,
            launch_sized_local_arrays: true,
            two_dimensional_local_arrays: true,
            async_copies: true,
            vectors: true,
            matrix_tiles: true,
            matrix_groups: true,
            atomics: true,
            float_atomics: true,
            device_functions: true,
            generics: true,
            approximate_math: true,
            possibly_undefined_percent: 8,
            known_bugs: KnownBugs::avoid_all(),
        }
    }
}

/// A generated module and how to run it.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedKernel {
    pub seed: u64,
    /// The `.krn` source.
    pub source: String,
    /// One run per kernel: one, or one per instance of a generic kernel.
    pub runs: Vec<KernelRun>,
    pub uses_sub_groups: bool,
    /// Some operations are unguarded, so the interpreter may report undefined behaviour.
    pub may_be_undefined: bool,
    /// How often each construct was generated.
    pub coverage: BTreeMap<String, u64>,
    /// The first NVIDIA processor (sm_XX) that can compile the module (its matrix tiles); 0
    /// for any. The checks leave PTX targets below it out.
    pub needs_sm: u32,
    /// The module has matrix-group statements: the checks add PTX for sm_90a (wgmma).
    pub matrix_groups: bool,
}

/// The module for `seed`: the same seed and options always give the same module and data.
pub fn generate(seed: u64, options: &GeneratorOptions) -> GeneratedKernel {
    if options.matrix_tiles && tiles::takes(seed) {
        return tiles::generate_module(seed, options);
    }
    if options.matrix_groups && groups::takes(seed) {
        return groups::generate_module(seed, options);
    }
    kernel::generate_module(seed, options)
}
