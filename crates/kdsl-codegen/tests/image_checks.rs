//! The runtime's checks of PTX and AMDGPU images against bundle metadata
//! (`kdsl_bundle::ptx_check`, `kdsl_bundle::amdgpu_check`) on real images: every example and
//! test kernel, plain and checked (for the processors `common::checked_targets` names), passes
//! with the metadata the compiler writes, and edited metadata (a parameter dropped, a scalar
//! widened, a buffer's elements narrowed, checked mode's hidden parameters claimed or denied)
//! is refused.

use crate::common::{artifact, checked_targets, kernel_modules};
use kdsl_bundle::amdgpu_check::check_amdgpu_kernels;
use kdsl_bundle::ptx_check::check_ptx_kernels;
use kdsl_bundle::{KernelInfo, ParameterInfo};
use kdsl_codegen::{compile, kernel_infos, Options, TargetSpec};
use kdsl_ir::ScalarType;

type Check = fn(&[u8], &[KernelInfo], &str) -> Result<(), String>;

fn targets() -> [(TargetSpec, Check); 2] {
    [
        (TargetSpec::ptx(Some("sm_90")), check_ptx_kernels as Check),
        (
            TargetSpec::amdgpu(Some("gfx90a")),
            check_amdgpu_kernels as Check,
        ),
    ]
}

#[test]
fn every_compiled_image_matches_its_metadata() {
    for (name, module) in kernel_modules() {
        for checked in [false, true] {
            let infos = kernel_infos(module, checked);
            for (spec, check) in targets() {
                if checked && !checked_targets(name).contains(&spec) {
                    continue; // an image `checked.rs` does not build either
                }
                let Ok(artifact) = artifact(name, module, &spec, checked) else {
                    continue; // a kernel this target does not support
                };
                check(&artifact.image.bytes, &infos, "")
                    .unwrap_or_else(|why| panic!("{name} for {spec} (checked: {checked}): {why}"));
            }
        }
    }
}

/// An edit of a kernel's metadata, named.
type Edit = (&'static str, fn(&mut KernelInfo));

/// Metadata edits that must be refused, each applied to the first kernel with a buffer.
fn edits() -> Vec<Edit> {
    vec![
        ("a parameter dropped", |kernel| {
            kernel.parameters.pop();
        }),
        ("checked mode claimed", |kernel| {
            kernel.checked = !kernel.checked
        }),
        ("a scalar added", |kernel| {
            kernel.parameters.push(ParameterInfo::Scalar {
                name: "extra".into(),
                ty: ScalarType::U32,
            })
        }),
        ("a buffer turned into a u64 scalar", |kernel| {
            let index = kernel
                .parameters
                .iter()
                .position(|p| matches!(p, ParameterInfo::Buffer { .. }))
                .unwrap();
            let name = kernel.parameters[index].name().to_string();
            kernel.parameters[index] = ParameterInfo::Scalar {
                name,
                ty: ScalarType::U64,
            };
        }),
    ]
}

#[test]
fn edited_metadata_is_refused() {
    let source = "kernel saxpy(y: global mut [f32], x: global [f32], a: f32, n: u32) {
    let i = get_global_id(0);
    if i < n { y[i] = a * x[i] + y[i]; }
}
";
    let module = kdsl_frontend::compile_to_ir(source).unwrap();
    for checked in [false, true] {
        let options = Options {
            checked,
            ..Options::default()
        };
        for (spec, check) in targets() {
            let image = compile(&module, &spec, &options).unwrap().image.bytes;
            let infos = kernel_infos(&module, checked);
            check(&image, &infos, "").unwrap();
            for (what, edit) in edits() {
                let mut edited = infos.clone();
                edit(&mut edited[0]);
                let refused = check(&image, &edited, "");
                assert!(
                    refused.is_err(),
                    "{spec} (checked: {checked}): {what} was accepted"
                );
            }
            let renamed = check(&image, &infos, "__sycl_kernel_").unwrap_err();
            assert!(renamed.contains("saxpy"), "{renamed}");
        }
        // PTX declares each buffer pointer's alignment, the element size: a narrowed element
        // type (f32 to u8, whose buffers would be a quarter of the size read) is refused.
        let image = compile(&module, &TargetSpec::ptx(Some("sm_90")), &options)
            .unwrap()
            .image
            .bytes;
        let mut narrowed = kernel_infos(&module, checked);
        if let ParameterInfo::Buffer { element, .. } = &mut narrowed[0].parameters[0] {
            *element = ScalarType::U8;
        }
        let message = check_ptx_kernels(&image, &narrowed, "").unwrap_err();
        assert!(message.contains("parameter `y`"), "{message}");
    }
}

/// Cutting a real image anywhere gives an error or, past what the check reads, a pass; never
/// a panic. The check needs a PTX entry's whole parameter list, and a code object's section
/// headers, which come last.
#[test]
fn truncated_images_are_errors_not_panics() {
    let module = kdsl_frontend::compile_to_ir(
        "kernel fill(y: global mut [u32], v: u32) { y[get_global_id(0)] = v; }",
    )
    .unwrap();
    let infos = kernel_infos(&module, false);
    for (spec, check) in targets() {
        let image = compile(&module, &spec, &Options::default())
            .unwrap()
            .image
            .bytes;
        let needed = match spec.kind {
            kdsl_bundle::TargetKind::Ptx => {
                let text = String::from_utf8_lossy(&image).into_owned();
                text.find(")\n{").expect("the entry's parameter list")
            }
            _ => image.len() - 1,
        };
        let step = (image.len() / 400).max(1);
        for cut in (0..image.len()).step_by(step) {
            let result = check(&image[..cut], &infos, "");
            assert!(
                result.is_err() || cut > needed,
                "{spec}: the first {cut} bytes were accepted"
            );
        }
    }
}

/// Random byte flips in real images (a small xorshift generator, so failures reproduce) give
/// an error or a pass, never a panic; flips that reach the parameter lists are refused.
#[test]
fn flipped_bytes_are_errors_or_harmless() {
    let module = kdsl_frontend::compile_to_ir(
        "kernel axpy(y: global mut [f32], x: global [f32], a: f32, n: u32) {
    let i = get_global_id(0);
    if i < n { y[i] = a * x[i] + y[i]; }
}",
    )
    .unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for checked in [false, true] {
        let infos = kernel_infos(&module, checked);
        let options = Options {
            checked,
            ..Options::default()
        };
        for (spec, check) in targets() {
            let image = compile(&module, &spec, &options).unwrap().image.bytes;
            for _ in 0..2_000 {
                let mut flipped = image.clone();
                for _ in 0..1 + next() % 4 {
                    let at = (next() % flipped.len() as u64) as usize;
                    flipped[at] ^= 1 << (next() % 8);
                }
                let _ = check(&flipped, &infos, "");
            }
            // A flip inside a PTX parameter's type, or of an AMDGPU argument's size byte.
            let refused = match spec.kind {
                kdsl_bundle::TargetKind::Ptx => {
                    let text = String::from_utf8(image.clone()).unwrap();
                    text.replacen(".param .f32", ".param .f64", 1).into_bytes()
                }
                _ => {
                    // `.size` followed by a positive fixint 4 (the f32 `a`): made 8.
                    let key = b"\xa5.size\x04";
                    let at = image
                        .windows(key.len())
                        .position(|window| window == key)
                        .expect("a 4-byte argument in the metadata note");
                    let mut edited = image.clone();
                    edited[at + key.len() - 1] = 8;
                    edited
                }
            };
            assert!(
                check(&refused, &infos, "").is_err(),
                "{spec}: an edited image passed"
            );
        }
    }
}
