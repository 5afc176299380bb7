//! SYCLBIN output (docs/syclbin.md): the bytes checked field by field against the format
//! description, and the files loaded by a stock C++ SYCL program (`tests/syclbin/load_syclbin.cpp`)
//! through `sycl::ext::oneapi::experimental::get_kernel_bundle`, with results checked there
//! against host references.

use kdsl::bundle::base64;
use kdsl::bundle::syclbin::{self, State, Syclbin};
use kdsl::{CompileOptions, TargetSpec};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example(name: &str) -> String {
    std::fs::read_to_string(repository().join("examples").join(name)).unwrap()
}

fn compile_syclbin(name: &str, targets: &[TargetSpec]) -> Syclbin {
    let source = example(name);
    kdsl::compile_syclbin(name, &source, targets, &CompileOptions::default())
        .unwrap_or_else(|error| panic!("{}", error.render(name, &source, false)))
}

fn saxpy_three_targets() -> Syclbin {
    compile_syclbin(
        "saxpy.krn",
        &[
            TargetSpec::spirv(),
            TargetSpec::ptx(Some("sm_90")),
            TargetSpec::amdgpu(Some("gfx90a")),
        ],
    )
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap())
}

fn u64_at(bytes: &[u8], offset: usize) -> usize {
    u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap()) as usize
}

/// A `2|` property value: the base64 text decoded, the leading bit count checked, the bytes.
fn byte_array(value: &str) -> Vec<u8> {
    let payload = base64::decode(value).expect("LLVM base64");
    let bits = u64::from_le_bytes(payload[..8].try_into().unwrap());
    assert_eq!(bits, (payload.len() as u64 - 8) * 8, "bit count of {value}");
    payload[8..].to_vec()
}

/// The names of a SPIR-V module's `OpEntryPoint`s, read word by word.
fn spirv_entry_points(binary: &[u8]) -> Vec<String> {
    let words: Vec<u32> = binary
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    assert_eq!(words[0], 0x0723_0203, "SPIR-V magic");
    let mut names = Vec::new();
    let mut index = 5;
    while index < words.len() {
        let (count, opcode) = ((words[index] >> 16) as usize, words[index] & 0xffff);
        assert!(count > 0, "SPIR-V word count 0 at word {index}");
        if opcode == 15 {
            // OpEntryPoint: execution model, function id, then the name as a NUL-ended string.
            let text: Vec<u8> = words[index + 3..index + count]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .take_while(|&b| b != 0)
                .collect();
            names.push(String::from_utf8(text).unwrap());
        }
        index += count;
    }
    names
}

fn readobj(arguments: &[&str], file: &Path) -> String {
    let tool = ["/usr/lib/llvm-22/bin/llvm-readobj", "llvm-readobj-22"]
        .into_iter()
        .find(|t| Path::new(t).is_file())
        .unwrap_or("llvm-readobj-22");
    let output = Command::new(tool)
        .args(arguments)
        .arg(file)
        .output()
        .expect("llvm-readobj runs (scripts/setup.sh installs LLVM 22)");
    assert!(output.status.success(), "{tool} failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn layout_follows_the_format_description() {
    let bytes = saxpy_three_targets().to_bytes();

    // OffloadBinary header and its one entry.
    assert_eq!(bytes[..4], [0x10, 0xFF, 0x10, 0xAD]);
    assert_eq!(u32_at(&bytes, 4), 2, "OffloadBinary version");
    assert_eq!(u64_at(&bytes, 8), bytes.len(), "total size");
    assert_eq!(u64_at(&bytes, 16), 32, "entries offset");
    assert_eq!(u64_at(&bytes, 24), 1, "entry count");
    assert_eq!(
        u16::from_le_bytes([bytes[32], bytes[33]]),
        7,
        "image kind SYCLBIN"
    );
    assert_eq!(
        u16::from_le_bytes([bytes[34], bytes[35]]),
        8,
        "offload kind SYCL"
    );
    assert_eq!(u32_at(&bytes, 36), 0, "flags");
    assert_eq!(
        (u64_at(&bytes, 40), u64_at(&bytes, 48)),
        (0, 0),
        "no strings"
    );
    assert_eq!(u64_at(&bytes, 56), 72, "image offset");
    assert_eq!(u64_at(&bytes, 64), bytes.len() - 72, "image size");

    // The SYCLBIN header.
    let image = &bytes[72..];
    assert_eq!(u32_at(image, 0), 0x5359_4249, "SYBI");
    assert_eq!(u32_at(image, 4), 1, "SYCLBIN version");
    let (modules, irs, natives) = (u32_at(image, 8), u32_at(image, 12), u32_at(image, 16));
    assert_eq!((modules, irs, natives), (1, 1, 2));
    assert_eq!(u32_at(image, 20), 0, "padding");
    let metadata_size = u64_at(image, 24);
    let binary_size = u64_at(image, 32);
    let metadata_start = 56 + 32 * 4;
    let binary_start = metadata_start + metadata_size;
    assert_eq!(metadata_size % 8, 0, "the metadata table is padded to 8");
    assert_eq!(binary_size % 8, 0, "the binary table is padded to 8");
    assert_eq!(
        binary_start + binary_size,
        image.len(),
        "nothing after the tables"
    );
    let metadata_table = &image[metadata_start..binary_start];
    let binary_table = &image[binary_start..];
    let text = |offset: usize, size: usize| -> &str {
        assert!(offset + size <= metadata_table.len());
        std::str::from_utf8(&metadata_table[offset..offset + size]).unwrap()
    };
    assert_eq!(
        text(u64_at(image, 40), u64_at(image, 48)),
        "[SYCLBIN/global metadata]\nstate=1|2\n",
        "state executable"
    );

    // The abstract module: every image, the prefixed kernel name, kdsl's metadata.
    let module = &image[56..88];
    assert_eq!(
        (
            u32_at(module, 16),
            u32_at(module, 20),
            u32_at(module, 24),
            u32_at(module, 28)
        ),
        (1, 0, 2, 0),
        "one IR module from 0, two native images from 0"
    );
    let module_text = text(u64_at(module, 0), u64_at(module, 8));
    let mut lines = module_text.lines();
    assert_eq!(lines.next(), Some("[SYCL/kernel names]"));
    assert_eq!(lines.next(), Some("__sycl_kernel_saxpy=1|1"));
    assert_eq!(lines.next(), Some("[kdsl/metadata]"));
    assert_eq!(lines.next(), Some("version=1|1"));
    assert_eq!(
        byte_array(lines.next().unwrap().strip_prefix("source=2|").unwrap()),
        b"saxpy.krn"
    );
    let kernels_json = byte_array(lines.next().unwrap().strip_prefix("kernels=2|").unwrap());
    let kernels_json = String::from_utf8(kernels_json).unwrap();
    assert!(
        kernels_json.starts_with(r#"[{"name":"saxpy","parameters":[{"kind":"buffer","name":"y""#),
        "{kernels_json}"
    );
    for parameter in ["x", "a", "n"] {
        assert!(
            kernels_json.contains(&format!(r#""name":"{parameter}""#)),
            "{kernels_json}"
        );
    }
    let checksums = byte_array(lines.next().unwrap().strip_prefix("checksums=2|").unwrap());
    let checksums = String::from_utf8(checksums).unwrap();
    assert_eq!(lines.next(), None);

    // Every image: its metadata, its place in the binary table, its entry point.
    let mut images = Vec::new();
    for (index, header) in image[88..56 + 32 * 4].chunks_exact(32).enumerate() {
        let metadata = text(u64_at(header, 0), u64_at(header, 8));
        let (offset, size) = (u64_at(header, 16), u64_at(header, 24));
        assert_eq!(offset % 8, 0, "image {index} is 8-byte aligned");
        assert!(offset + size <= binary_table.len());
        images.push((metadata, &binary_table[offset..offset + size]));
    }
    let (spirv_metadata, spirv) = images[0];
    assert_eq!(spirv_metadata, "[SYCLBIN/ir module metadata]\ntype=1|0\n");
    assert_eq!(spirv_entry_points(spirv), ["__sycl_kernel_saxpy"]);

    for (index, (triple, arch)) in [
        ("nvptx64-nvidia-cuda", "sm_90"),
        ("amdgcn-amd-amdhsa", "gfx90a"),
    ]
    .into_iter()
    .enumerate()
    {
        let (metadata, _) = images[1 + index];
        let mut lines = metadata.lines();
        assert_eq!(
            lines.next(),
            Some("[SYCLBIN/native device code image metadata]")
        );
        let target = lines.next().unwrap().strip_prefix("target=2|").unwrap();
        assert_eq!(byte_array(target), triple.as_bytes());
        let arch_value = lines.next().unwrap().strip_prefix("arch=2|").unwrap();
        assert_eq!(byte_array(arch_value), arch.as_bytes());
        assert_eq!(lines.next(), None);
    }
    let ptx = std::str::from_utf8(images[1].1).unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(ptx.contains(".entry __sycl_kernel_saxpy("), "{ptx}");

    let expected_checksums: Vec<String> = images
        .iter()
        .map(|(_, bytes)| kdsl::bundle::image_checksum(bytes))
        .collect();
    assert_eq!(
        checksums,
        expected_checksums.join(","),
        "IR module, then native images"
    );

    let hsaco = images[2].1;
    assert_eq!(&hsaco[..4], b"\x7fELF");
    let file = std::env::temp_dir().join(format!("kdsl-syclbin-{}.hsaco", std::process::id()));
    std::fs::write(&file, hsaco).unwrap();
    let symbols = readobj(&["--symbols"], &file);
    let notes = readobj(&["--notes"], &file);
    let _ = std::fs::remove_file(&file);
    assert!(symbols.contains("Name: __sycl_kernel_saxpy ("), "{symbols}");
    assert!(
        symbols.contains("Name: __sycl_kernel_saxpy.kd ("),
        "{symbols}"
    );
    assert!(
        notes.contains(".name:           __sycl_kernel_saxpy\n"),
        "{notes}"
    );
    assert!(
        notes.contains(".symbol:         __sycl_kernel_saxpy.kd\n"),
        "{notes}"
    );
    assert!(notes.contains("amdgcn-amd-amdhsa--gfx90a"), "{notes}");
}

#[test]
fn parser_gives_back_the_bundle_and_kbundles_keep_plain_names() {
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ];
    let syclbin = saxpy_three_targets();
    let parsed = Syclbin::from_bytes(&syclbin.to_bytes()).unwrap();
    assert_eq!(parsed, syclbin);
    assert_eq!(parsed.state, State::Executable);
    let from_syclbin = parsed.to_bundle().unwrap();
    let source = example("saxpy.krn");
    let kbundle =
        kdsl::compile("saxpy.krn", &source, &targets, &CompileOptions::default()).unwrap();
    assert_eq!(
        from_syclbin.kernels, kbundle.kernels,
        "the same kdsl metadata"
    );
    assert_eq!(from_syclbin.describe_images(), kbundle.describe_images());

    // The images differ only in the entry point names.
    let ptx = |bundle: &kdsl::Bundle| String::from_utf8(bundle.images[1].bytes.clone()).unwrap();
    assert!(ptx(&kbundle).contains(".entry saxpy("));
    assert!(!ptx(&kbundle).contains("__sycl_kernel_"));
    assert_eq!(
        ptx(&from_syclbin).replace("__sycl_kernel_saxpy", "saxpy"),
        ptx(&kbundle)
    );
    assert_eq!(spirv_entry_points(&kbundle.images[0].bytes), ["saxpy"]);
    assert_eq!(
        spirv_entry_points(&from_syclbin.images[0].bytes),
        [syclbin::entry_point_name("saxpy")]
    );
}

/// The stock SYCL program, built once per test run like the runtime's shim is built:
/// host-only C++17 against the prefix's headers and libsycl. `Err` says why it cannot be built.
fn load_syclbin_program() -> Result<&'static Path, String> {
    static PROGRAM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let prefix = std::env::var_os("KDSL_PREFIX")
                .map(PathBuf::from)
                .unwrap_or_else(|| repository().join(".kdsl/prefix"));
            let (include, lib) = (prefix.join("include"), prefix.join("lib"));
            if !include.join("sycl/sycl.hpp").is_file() || !lib.join("libsycl.so").is_file() {
                return Err(format!(
                    "no SYCL headers and libsycl.so under {} (run scripts/setup.sh)",
                    prefix.display()
                ));
            }
            let source = repository().join("tests/syclbin/load_syclbin.cpp");
            let program = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("load_syclbin");
            let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
            let output = Command::new(&compiler)
                .arg("-std=c++17")
                .arg("-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING")
                .arg("-Wno-deprecated-declarations")
                .arg("-I")
                .arg(&include)
                .arg(&source)
                .arg("-o")
                .arg(&program)
                .arg(format!("-L{}", lib.display()))
                .arg("-lsycl")
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .output()
                .map_err(|e| format!("cannot run the C++ compiler `{compiler}`: {e}"))?;
            if !output.status.success() {
                return Err(format!(
                    "{compiler} could not build {}:\n{}",
                    source.display(),
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
            Ok(program)
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

struct Run {
    status: Option<i32>,
    output: String,
}

/// Writes saxpy and reduction SYCLBINs (every default target, so the SYCL runtime must pick
/// the image fitting the device) in `state`, and runs the stock program on them.
fn run_stock_program(program: &Path, backend: &str, file_state: State, asked: &str) -> Run {
    let folder = std::env::temp_dir().join(format!(
        "kdsl-syclbin-{}-{backend}-{}-{asked}",
        std::process::id(),
        file_state.name()
    ));
    std::fs::create_dir_all(&folder).unwrap();
    let mut paths = Vec::new();
    for (example_name, file_name) in [
        ("saxpy.krn", "saxpy.syclbin"),
        ("reduction.krn", "reduction.syclbin"),
    ] {
        let mut syclbin = compile_syclbin(example_name, &kdsl::default_targets());
        syclbin.state = file_state;
        let path = folder.join(file_name);
        std::fs::write(&path, syclbin.to_bytes()).unwrap();
        paths.push(path);
    }
    let output = Command::new(program)
        .arg(backend)
        .arg(asked)
        .args(&paths)
        .output()
        .expect("the stock SYCL program runs");
    let _ = std::fs::remove_dir_all(&folder);
    Run {
        status: output.status.code(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

#[test]
fn stock_sycl_program_runs_kdsl_syclbin_on_the_opencl_cpu_device() {
    let program = load_syclbin_program().unwrap_or_else(|why| panic!("{why}"));
    let run = run_stock_program(program, "opencl", State::Executable, "executable");
    assert_eq!(
        run.status,
        Some(0),
        "the OpenCL CPU device is set up by scripts/setup.sh:\n{}",
        run.output
    );
    assert!(
        run.output.contains("saxpy: 100000 elements, 0 wrong"),
        "{}",
        run.output
    );
    assert!(
        run.output.contains("reduce_sum: 196 groups, 0 wrong"),
        "{}",
        run.output
    );
}

#[test]
fn the_state_in_the_file_must_match_the_state_asked_for() {
    let program = load_syclbin_program().unwrap_or_else(|why| panic!("{why}"));
    let input = run_stock_program(program, "opencl", State::Input, "input");
    assert_eq!(
        input.status,
        Some(0),
        "input + sycl::build:\n{}",
        input.output
    );
    assert!(
        input.output.contains("reduce_sum: 196 groups, 0 wrong"),
        "{}",
        input.output
    );
    let mismatch = run_stock_program(program, "opencl", State::Executable, "input");
    assert_eq!(mismatch.status, Some(1), "{}", mismatch.output);
    assert!(
        mismatch.output.contains("state does not match"),
        "{}",
        mismatch.output
    );
}

#[test]
fn ptx_entry_runs_through_sycl_on_a_cuda_device_when_one_is_present() {
    let program = match load_syclbin_program() {
        Ok(program) => program,
        Err(why) => {
            eprintln!("skipped: the stock SYCL program cannot be built here: {why}");
            return;
        }
    };
    let run = run_stock_program(program, "ext_oneapi_cuda", State::Executable, "executable");
    if run.status == Some(77) {
        eprintln!(
            "skipped: no SYCL device of backend ext_oneapi_cuda (the SYCL runtime here has no \
             Unified Runtime CUDA adapter, or there is no NVIDIA GPU): {}",
            run.output.trim()
        );
        return;
    }
    assert_eq!(run.status, Some(0), "{}", run.output);
    assert!(
        run.output.contains("saxpy: 100000 elements, 0 wrong"),
        "{}",
        run.output
    );
    assert!(
        run.output.contains("reduce_sum: 196 groups, 0 wrong"),
        "{}",
        run.output
    );
}
