//! The names of every `KDSL_*` environment variable kdsl reads, in one list; what each means is
//! the table in docs/environment.md. It sits in kdsl-bundle because compiler, runtime, CLI and
//! tests all depend on this crate. A test fails when a source file, script or Python module
//! reads a `KDSL_*` name missing here, or when one here is missing from the docs. Code that
//! reads one should name it through these constants where it can depend on this crate.

/// The project-local prefix: SYCL runtime, OpenCL CPU device, `ptxas`, libdevice, Python.
pub const PREFIX: &str = "KDSL_PREFIX";
/// The path of `libdevice.10.bc`, before the prefix and CUDA's usual paths.
pub const LIBDEVICE: &str = "KDSL_LIBDEVICE";
/// libclc's bitcode folder (the Python wheel ships its own), before Debian's `/usr/lib/clc`.
pub const LIBCLC_DIR: &str = "KDSL_LIBCLC_DIR";
/// The cache folder of math-library subsets (codegen) and compiled bundles (Python).
pub const CACHE_DIR: &str = "KDSL_CACHE_DIR";
/// `off`: `kdsl compile` never uses a compile server.
pub const COMPILE_SERVER: &str = "KDSL_COMPILE_SERVER";
/// The cargo profile `scripts/compile-examples.sh` builds the CLI with.
pub const PROFILE: &str = "KDSL_PROFILE";
/// `off` or `0`: the runtime's cache of built native programs is off.
pub const NATIVE_CACHE: &str = "KDSL_NATIVE_CACHE";
/// The folder of the native program cache; else `native` in the cache folder.
pub const NATIVE_CACHE_DIR: &str = "KDSL_NATIVE_CACHE_DIR";
/// The fresh venv `scripts/python-install.sh` installs the wheel into (default `.kdsl/venv`).
pub const VENV: &str = "KDSL_VENV";
/// `release` (default) or `dev`: the profile `scripts/build-wheel.sh` builds the wheel with.
pub const WHEEL_PROFILE: &str = "KDSL_WHEEL_PROFILE";
/// The plain Python that venv is made from.
pub const VENV_PYTHON: &str = "KDSL_VENV_PYTHON";
/// A device filter that chooses the default device.
pub const DEVICE: &str = "KDSL_DEVICE";
/// The path of `libkdsl_sycl_shim.so`.
pub const SYCL_SHIM: &str = "KDSL_SYCL_SHIM";
/// MiB of CUDA's printf buffer in a context that loads a printing kernel (default 64).
pub const CUDA_PRINTF_BUFFER_MB: &str = "KDSL_CUDA_PRINTF_BUFFER_MB";
/// The AMD processor to assume instead of asking HIP.
pub const HIP_ARCH: &str = "KDSL_HIP_ARCH";
/// `1`: the long test runs (more fuzzgen seeds, every kernel mutation), as GPU and nightly runs do.
pub const LONG_TESTS: &str = "KDSL_LONG_TESTS";
/// A device filter for the device tests.
pub const TEST_DEVICE: &str = "KDSL_TEST_DEVICE";
/// `1`: device tests pass without a device.
pub const ALLOW_NO_DEVICE: &str = "KDSL_ALLOW_NO_DEVICE";
/// The folder of the bundles `scripts/compile-examples.sh` wrote.
pub const TEST_BUNDLES: &str = "KDSL_TEST_BUNDLES";
/// The `examples/` folder, for the Python tests' child processes.
pub const TEST_EXAMPLES: &str = "KDSL_TEST_EXAMPLES";
/// The repository root, for a test binary copied to another machine.
pub const WORKSPACE: &str = "KDSL_WORKSPACE";
/// `1`: the `.krn` file tests write their expected outputs instead of comparing them.
pub const BLESS: &str = "KDSL_BLESS";
/// The device the device suite's printing child process runs on (set by the suite itself).
pub const PRINT_CHILD_DEVICE: &str = "KDSL_PRINT_CHILD_DEVICE";
/// How many work-items that child launches (set by the suite itself).
pub const PRINT_CHILD_WORK_ITEMS: &str = "KDSL_PRINT_CHILD_WORK_ITEMS";
/// How many modules the fuzzgen tests generate.
pub const FUZZGEN_COUNT: &str = "KDSL_FUZZGEN_COUNT";
/// The first seed of the fuzzgen tests.
pub const FUZZGEN_SEED: &str = "KDSL_FUZZGEN_SEED";
/// Set: fuzzgen prints the kernels it skips for undefined behaviour.
pub const FUZZGEN_SHOW_UNDEFINED: &str = "KDSL_FUZZGEN_SHOW_UNDEFINED";
/// Launches the runtime's `launch_cost` timing makes.
pub const LAUNCH_COST_LAUNCHES: &str = "KDSL_LAUNCH_COST_LAUNCHES";
/// Internal: marks the child process of `sycl_runtime_missing.rs`.
pub const SYCL_MISSING_TEST_CHILD: &str = "KDSL_SYCL_MISSING_TEST_CHILD";
/// Unified-runtime sources: the GPU packaging scripts also package the SYCL CUDA rig.
pub const UR_SOURCE: &str = "KDSL_UR_SOURCE";
/// Where the SYCL CUDA rig is unpacked.
pub const RIG_DIR: &str = "KDSL_RIG_DIR";
/// Set: `scripts/python-gpu-run.sh` skips the benchmarks.
pub const SKIP_BENCHMARKS: &str = "KDSL_SKIP_BENCHMARKS";
/// Set: `scripts/python-gpu-package.sh` carries the wheel without `kdsl._compiler`.
pub const CARRY_WITHOUT_COMPILER: &str = "KDSL_CARRY_WITHOUT_COMPILER";
/// Set by kdsl-runtime's build script: where it built the SYCL shim.
pub const SYCL_SHIM_BUILT_PATH: &str = "KDSL_SYCL_SHIM_BUILT_PATH";
/// Set by kdsl-runtime's build script: the SYCL runtime's library folder.
pub const SYCL_SHIM_LIBSYCL_DIRECTORY: &str = "KDSL_SYCL_SHIM_LIBSYCL_DIRECTORY";
/// Set by kdsl-python's build script: a hash of the compiler's sources.
pub const COMPILER_SOURCE_HASH: &str = "KDSL_COMPILER_SOURCE_HASH";

/// Every name above.
pub const ALL: &[&str] = &[
    PREFIX,
    LIBDEVICE,
    LIBCLC_DIR,
    CACHE_DIR,
    COMPILE_SERVER,
    PROFILE,
    NATIVE_CACHE,
    NATIVE_CACHE_DIR,
    VENV,
    VENV_PYTHON,
    WHEEL_PROFILE,
    DEVICE,
    SYCL_SHIM,
    CUDA_PRINTF_BUFFER_MB,
    HIP_ARCH,
    LONG_TESTS,
    TEST_DEVICE,
    ALLOW_NO_DEVICE,
    TEST_BUNDLES,
    TEST_EXAMPLES,
    WORKSPACE,
    BLESS,
    PRINT_CHILD_DEVICE,
    PRINT_CHILD_WORK_ITEMS,
    FUZZGEN_COUNT,
    FUZZGEN_SEED,
    FUZZGEN_SHOW_UNDEFINED,
    LAUNCH_COST_LAUNCHES,
    SYCL_MISSING_TEST_CHILD,
    UR_SOURCE,
    RIG_DIR,
    SKIP_BENCHMARKS,
    CARRY_WITHOUT_COMPILER,
    SYCL_SHIM_BUILT_PATH,
    SYCL_SHIM_LIBSYCL_DIRECTORY,
    COMPILER_SOURCE_HASH,
];

#[cfg(test)]
mod tests {
    use super::ALL;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    /// `KDSL_` names in code that are not environment variables: Rust constants of the SYCLBIN
    /// writer, C macros and defines of the C++ (codegen's and the SYCL shim's; header guards,
    /// `..._H`, are left out by their ending).
    const NOT_VARIABLES: &[&str] = &[
        "KDSL_METADATA",
        "KDSL_METADATA_VERSION",
        "KDSL_UNUSED_TARGET",
        "KDSL_TARGETS_LLD_NEED_NOT_INITIALIZE",
        "KDSL_CONTAINED_CRASHED",
        "KDSL_CONTAINED_FATAL_ERROR",
        "KDSL_CONTAINED_RETURNED",
        "KDSL_SYCL_OPAQUE",
        "KDSL_SYCL_SHIM_INTERFACE_VERSION",
        // A Python tuple of the variables env.sh sets, in python/tests/test_environment.py.
        "KDSL_ENVIRONMENT",
    ];

    fn repository() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Every `KDSL_[A-Z0-9_]+` word in `text`.
    fn names_in(text: &str, into: &mut BTreeSet<String>) {
        let mut rest = text;
        while let Some(start) = rest.find("KDSL_") {
            let tail = &rest[start..];
            let end = tail
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(tail.len());
            let name = tail[..end].trim_end_matches('_');
            if name.len() > "KDSL_".len() {
                into.insert(name.to_string());
            }
            rest = &tail[end..];
        }
    }

    fn scan(path: &Path, into: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if path.is_dir() {
                if !["target", "snapshots", "results", "corpus", "__pycache__"]
                    .contains(&name.as_ref())
                {
                    scan(&path, into);
                }
            } else if ["rs", "py", "pyi", "sh", "toml", "c", "cpp", "h"]
                .iter()
                .any(|extension| name.ends_with(&format!(".{extension}")))
                && name != "environment.rs"
            {
                names_in(&std::fs::read_to_string(&path).unwrap_or_default(), into);
            }
        }
    }

    #[test]
    fn every_variable_the_sources_read_is_listed_and_documented() {
        let root = repository();
        let mut used = BTreeSet::new();
        for folder in [
            "src",
            "crates",
            "scripts",
            "python",
            "runtime-shim",
            "tests",
            "examples",
            "benchmarks",
            ".cargo",
            "build.rs",
        ] {
            let path = root.join(folder);
            if path.is_file() {
                names_in(&std::fs::read_to_string(&path).unwrap(), &mut used);
            } else {
                scan(&path, &mut used);
            }
        }
        let unlisted: Vec<_> = used
            .iter()
            .filter(|name| {
                !ALL.contains(&name.as_str())
                    && !NOT_VARIABLES.contains(&name.as_str())
                    && !name.ends_with("_H")
            })
            .collect();
        assert!(unlisted.is_empty(), "not in environment.rs: {unlisted:?}");
        let docs = std::fs::read_to_string(root.join("docs/environment.md")).unwrap();
        let undocumented: Vec<_> = ALL
            .iter()
            .filter(|name| !docs.contains(&format!("`{name}`")))
            .collect();
        assert!(
            undocumented.is_empty(),
            "not in docs/environment.md: {undocumented:?}"
        );
    }
}
