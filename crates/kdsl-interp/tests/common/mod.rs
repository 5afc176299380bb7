//! Helpers shared by the interpreter's tests.
#![allow(dead_code)]

use kdsl_interp::{HostElement, InterpArgument};
use kdsl_ir::Module;

pub use kdsl_testkit::files::workspace_root as workspace;

/// Compiles a `.krn` source text to IR, failing the test with the diagnostics.
pub fn compile(source: &str) -> Module {
    match kdsl_frontend::compile_to_ir(source) {
        Ok(module) => module,
        Err(diagnostics) => panic!("the source does not compile: {diagnostics:#?}"),
    }
}

/// Compiles a file relative to the repository root, such as `examples/saxpy.krn`.
pub fn compile_file(path: &str) -> Module {
    let path = workspace().join(path);
    let source = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    compile(&source)
}

/// A small deterministic generator (xorshift64*), so that failures reproduce.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Random {
        Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [low, high).
    pub fn f32_in(&mut self, low: f32, high: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        low + unit * (high - low)
    }

    /// Uniform in [low, high).
    pub fn f64_in(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        low + unit * (high - low)
    }

    pub fn f32s(&mut self, count: usize, low: f32, high: f32) -> Vec<f32> {
        (0..count).map(|_| self.f32_in(low, high)).collect()
    }

    pub fn f64s(&mut self, count: usize, low: f64, high: f64) -> Vec<f64> {
        (0..count).map(|_| self.f64_in(low, high)).collect()
    }

    /// Uniform in [low, high).
    pub fn i64_in(&mut self, low: i64, high: i64) -> i64 {
        low + (self.next_u64() % (high - low) as u64) as i64
    }
}

/// Fails unless every value is within `tolerance` of the reference, relative to its magnitude
/// or 1, whichever is larger.
pub fn assert_close(what: &str, got: &[f64], want: &[f64], tolerance: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths differ");
    for (index, (&got, &want)) in got.iter().zip(want).enumerate() {
        let bound = tolerance * want.abs().max(1.0);
        assert!(
            (got - want).abs() <= bound || (got.is_nan() && want.is_nan()),
            "{what}[{index}] = {got}, expected {want} (relative tolerance {tolerance})"
        );
    }
}

/// Samples scattered closely around well separated centres, so that every sample's nearest
/// centroid is clear: `(x_t, centres)`, `x_t` feature-major.
pub fn kmeans_blobs(
    random: &mut Random,
    n_samples: usize,
    n_features: usize,
    n_clusters: usize,
) -> (Vec<f32>, Vec<f32>) {
    let centres = random.f32s(n_clusters * n_features, -20.0, 20.0);
    let mut x_t = vec![0.0f32; n_features * n_samples];
    for sample in 0..n_samples {
        let cluster = (random.next_u64() % n_clusters as u64) as usize;
        for feature in 0..n_features {
            x_t[feature * n_samples + sample] =
                centres[cluster * n_features + feature] + random.f32_in(-0.5, 0.5);
        }
    }
    (x_t, centres)
}

/// A multi-dimensional buffer argument: the buffer, then its extents (`u32`) and strides (`u64`,
/// in elements), as the kernel's parameter list holds them.
pub fn shaped<T: HostElement>(
    values: Vec<T>,
    shape: &[u32],
    strides: &[u64],
) -> Vec<InterpArgument> {
    let mut arguments = vec![InterpArgument::buffer(values)];
    arguments.extend(shape.iter().map(|&extent| InterpArgument::scalar(extent)));
    arguments.extend(strides.iter().map(|&stride| InterpArgument::scalar(stride)));
    arguments
}

/// [`shaped`] for a C-contiguous (row-major) array.
pub fn contiguous<T: HostElement>(values: Vec<T>, shape: &[u32]) -> Vec<InterpArgument> {
    let mut strides = vec![1u64; shape.len()];
    for dimension in (0..shape.len().saturating_sub(1)).rev() {
        strides[dimension] = strides[dimension + 1] * u64::from(shape[dimension + 1]);
    }
    shaped(values, shape, &strides)
}
