//! The check the `bundle` fuzz target (`crates/kdsl-fuzz`) runs on every input, kept here so
//! that `tests/fuzz_corpus.rs` replays the committed corpus through exactly the same code on
//! stable Rust. Not part of the crate's API.

use crate::syclbin::{self, State, Syclbin, KERNEL_NAME_PREFIX};
use crate::{base64, image_checksum, Bundle, BundleError, Image, TargetKind};

/// What one input parsed as.
#[derive(Debug, Default)]
pub struct BundleOutcome {
    /// [`Bundle::from_bytes`] accepted the input.
    pub kbundle: Option<Bundle>,
    /// [`Syclbin::from_bytes`] accepted the input.
    pub syclbin: Option<Syclbin>,
    /// What [`Bundle::read`] gives for a file holding the input, when it gives a bundle.
    pub loaded: Option<Bundle>,
}

/// Runs arbitrary bytes through both readers the way a loader does: [`Bundle::from_bytes`],
/// [`Syclbin::from_bytes`], and [`Bundle::read`]'s choice between them; then, for everything
/// that parses, every accessor a loader uses, the image checksums (a flipped image byte and a
/// truncated file must be refused), a write and read round trip that must give an equal value,
/// and the SYCLBIN the SYCL backend writes for each image before handing it to the driver.
///
/// Panics when a reader or writer breaks its promise: a panic while parsing, a value that does
/// not survive its own writer and reader, or damage that goes unnoticed.
pub fn run_bundle_input(data: &[u8]) -> BundleOutcome {
    let kbundle = Bundle::from_bytes(data);
    let syclbin = Syclbin::from_bytes(data);
    // `Bundle::read` without the file: it picks the reader by the first bytes.
    let loaded = if syclbin::is_syclbin(data) {
        syclbin
            .as_ref()
            .map_err(describe_error)
            .and_then(|file| file.to_bundle().map_err(|e| describe_error(&e)))
    } else {
        kbundle.as_ref().cloned().map_err(describe_error)
    };

    if let Ok(bundle) = &kbundle {
        check_bundle(bundle, data);
    }
    if let Ok(file) = &syclbin {
        check_syclbin(file, data);
    }
    if let Ok(bundle) = &loaded {
        if syclbin::is_syclbin(data) {
            assert_eq!(bundle.entry_point_prefix, KERNEL_NAME_PREFIX);
            assert!(bundle.constants.is_empty());
        }
        check_bundle(bundle, data);
    }

    // The property-set base64 variant on its own: what decodes re-encodes to the same text.
    let text = String::from_utf8_lossy(data);
    if let Ok(decoded) = base64::decode(&text) {
        assert_eq!(base64::encode(&decoded), text, "base64 did not round-trip");
    }

    BundleOutcome {
        kbundle: kbundle.ok(),
        syclbin: syclbin.ok(),
        loaded: loaded.ok(),
    }
}

/// Every error renders as a message (what a loader shows).
fn describe_error(error: &BundleError) -> String {
    let message = error.to_string();
    assert!(!message.is_empty());
    message
}

/// A small deterministic choice derived from the input, so a run reproduces.
fn pick(data: &[u8], salt: u64, bound: usize) -> usize {
    let mut hash = 0xcbf2_9ce4_8422_2325u64 ^ salt;
    for &byte in data.iter().take(4096) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash % bound.max(1) as u64) as usize
}

/// A bundle for a failure message: everything but the image bytes, which stand as checksums.
fn describe_bundle(bundle: &Bundle) -> String {
    let images: Vec<String> = bundle
        .images
        .iter()
        .map(|i| {
            format!(
                "{} {} bytes {}",
                i.describe(),
                i.bytes.len(),
                image_checksum(&i.bytes)
            )
        })
        .collect();
    format!(
        "source {:?}, prefix {:?}, kernels {:?}, constants {:?}, images {images:?}",
        bundle.source_name, bundle.entry_point_prefix, bundle.kernels, bundle.constants
    )
}

fn assert_same(found: &Bundle, expected: &Bundle, what: &str) {
    assert!(
        found == expected,
        "{what}:\n found    {}\n expected {}",
        describe_bundle(found),
        describe_bundle(expected)
    );
}

/// A SYCLBIN for a failure message, image bytes as checksums.
fn describe_syclbin(file: &Syclbin) -> String {
    let modules: Vec<String> = file
        .modules
        .iter()
        .map(|m| {
            let irs: Vec<String> = m
                .ir_modules
                .iter()
                .map(|ir| format!("{:?} {}", ir.ir_type, image_checksum(&ir.bytes)))
                .collect();
            let natives: Vec<String> = m
                .native_images
                .iter()
                .map(|n| format!("{} {} {}", n.target, n.arch, image_checksum(&n.bytes)))
                .collect();
            format!(
                "kernel names {:?}, kdsl {:?}, other sets {:?}, IR {irs:?}, native {natives:?}",
                m.kernel_names, m.kdsl, m.other_property_sets
            )
        })
        .collect();
    format!("state {:?}, modules {modules:?}", file.state)
}

fn check_bundle(bundle: &Bundle, data: &[u8]) {
    // The accessors a runtime and `kdsl inspect` use.
    for kernel in &bundle.kernels {
        let found = bundle
            .kernel(&kernel.name)
            .expect("a listed kernel is found");
        assert_eq!(found.name, kernel.name);
        let entry = bundle.entry_point(&kernel.name);
        assert!(entry.starts_with(&bundle.entry_point_prefix) && entry.ends_with(&kernel.name));
        for parameter in &kernel.parameters {
            let _ = parameter.name();
        }
        for local in [
            &[][..],
            &[1],
            &[0],
            &[u64::MAX],
            &[256, 1],
            &[8, 8, 4],
            &[1, 1, 1, 1],
            &[1, 1, 1, 2],
        ] {
            let _ = kernel.check_work_group_size(local);
        }
        if let Some(required) = kernel.work_group_size {
            assert_eq!(
                kernel.check_work_group_size(&required.map(u64::from)),
                Ok(())
            );
        }
    }
    for constant in &bundle.constants {
        let found = bundle.constant(&constant.name).expect("a listed constant");
        assert_eq!(found.name, constant.name);
        let value = constant.value;
        let _ = (
            value.as_u64(),
            value.as_i64(),
            value.as_f64(),
            value.as_bool(),
        );
        assert!(!value.to_string().is_empty());
    }
    let mut counted = 0;
    for target in TargetKind::ALL {
        assert_eq!(TargetKind::from_name(target.name()), Some(target));
        counted += bundle
            .images_for(target)
            .inspect(|image| assert_eq!(image.target, target))
            .count();
    }
    assert_eq!(counted, bundle.images.len());
    let description = bundle.describe_images();
    for image in &bundle.images {
        assert!(description.contains(&image.describe()));
        let checksum = image_checksum(&image.bytes);
        assert!(checksum.starts_with("fnv1a64:") && checksum.len() == 24);
    }
    let mut located = bundle.clone();
    located.locate_check_sites(&String::from_utf8_lossy(data));
    for site in located.kernels.iter().flat_map(|k| &k.check_sites) {
        assert!(site.line >= 1 && site.column >= 1);
    }

    // Writing and reading back gives the same bundle, and writing that the same bytes.
    let bytes = bundle.to_bytes();
    let reread = Bundle::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("a written bundle does not read back: {e}"));
    assert_same(&reread, bundle, "the bundle changed in a write and read");
    assert!(reread.to_bytes() == bytes, "writing is not deterministic");

    // Damage is refused: one flipped image byte (the checksum), one byte cut off the end.
    let metadata_end = crate::header_length(crate::FORMAT_VERSION)
        + u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
    let mut offset = metadata_end;
    let images: Vec<(usize, &Image)> = bundle
        .images
        .iter()
        .map(|image| {
            let start = offset;
            offset += image.bytes.len();
            (start, image)
        })
        .filter(|(_, image)| !image.bytes.is_empty())
        .collect();
    if !images.is_empty() {
        let (start, image) = images[pick(data, 1, images.len())];
        let at = start + pick(data, 2, image.bytes.len());
        let mut damaged = bytes.clone();
        damaged[at] ^= 1 << pick(data, 3, 8);
        assert!(
            Bundle::from_bytes(&damaged).is_err(),
            "a flipped byte in the {} image went unnoticed",
            image.describe()
        );
    }
    assert!(
        Bundle::from_bytes(&bytes[..bytes.len() - 1]).is_err(),
        "a truncated bundle was read"
    );

    // What `kdsl compile --format syclbin` writes for the bundle, and what the SYCL backend
    // writes for each image of a bundle whose entry points carry a prefix (it hands the driver
    // a SYCLBIN holding just the chosen image).
    let state = [State::Input, State::Object, State::Executable][pick(data, 4, 3)];
    check_syclbin_of(bundle, state, data);
    if !bundle.entry_point_prefix.is_empty() {
        for image in &bundle.images {
            let single = Bundle {
                images: vec![image.clone()],
                ..bundle.clone()
            };
            check_syclbin_of(&single, State::Executable, data);
        }
    }
}

/// [`Syclbin::from_bundle`] either refuses the bundle or writes a file that reads back as the
/// same images and kernels.
fn check_syclbin_of(bundle: &Bundle, state: State, data: &[u8]) {
    let file = match Syclbin::from_bundle(bundle, state) {
        Ok(file) => file,
        Err(BundleError::MissingEntryPoint { .. }) => return,
        Err(BundleError::Corrupt(_))
            if bundle.kernels.iter().any(|k| k.name.contains(['=', '\n'])) =>
        {
            return
        }
        Err(error) => panic!("Syclbin::from_bundle failed unexpectedly: {error}"),
    };
    let bytes = file.to_bytes();
    let reread = Syclbin::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("a SYCLBIN written from a bundle does not read back: {e}"));
    assert!(
        reread == file,
        "the SYCLBIN written from a bundle changed in a write and read:\n{}\n{}",
        describe_syclbin(&reread),
        describe_syclbin(&file)
    );
    let back = reread
        .to_bundle()
        .unwrap_or_else(|e| panic!("a SYCLBIN written from a bundle has no bundle: {e}"));
    // IR modules (SPIR-V) come first, then native images.
    let expected_images: Vec<Image> = bundle
        .images
        .iter()
        .filter(|i| i.target == TargetKind::Spirv)
        .chain(
            bundle
                .images
                .iter()
                .filter(|i| i.target != TargetKind::Spirv),
        )
        .cloned()
        .collect();
    let expected = Bundle {
        images: expected_images,
        constants: Vec::new(),
        entry_point_prefix: KERNEL_NAME_PREFIX.to_string(),
        ..bundle.clone()
    };
    assert_same(
        &back,
        &expected,
        "a bundle changed on its way through SYCLBIN",
    );
    check_syclbin(&reread, data);
}

fn check_syclbin(file: &Syclbin, data: &[u8]) {
    let description = file.describe_images();
    assert!(!description.is_empty());
    for module in &file.modules {
        assert_eq!(module.plain_kernel_names().len(), module.kernel_names.len());
    }
    match file.to_bundle() {
        Ok(bundle) => assert_eq!(bundle.entry_point_prefix, KERNEL_NAME_PREFIX),
        Err(BundleError::NoKdslMetadata) => {
            assert!(file.modules.iter().all(|m| m.kdsl.is_none()))
        }
        Err(error) => panic!("Syclbin::to_bundle failed unexpectedly: {error}"),
    }

    let bytes = file.to_bytes();
    let reread = Syclbin::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("a written SYCLBIN does not read back: {e}"));
    assert!(
        &reread == file,
        "the SYCLBIN changed in a write and read:\n{}\n{}",
        describe_syclbin(&reread),
        describe_syclbin(file)
    );
    assert!(reread.to_bytes() == bytes, "writing is not deterministic");
    assert!(
        Syclbin::from_bytes(&bytes[..bytes.len() - 1]).is_err(),
        "a truncated SYCLBIN was read"
    );

    // A flipped byte in an image of a module with `[kdsl/metadata]` fails its checksum. The
    // written file holds each module's images in order (IR modules of every module, then native
    // images), and each header gives its image's offset in the binary table.
    let read_u64 = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    const IMAGE: usize = 72;
    let module_count = file.modules.len();
    let ir_count: usize = file.modules.iter().map(|m| m.ir_modules.len()).sum();
    let native_count: usize = file.modules.iter().map(|m| m.native_images.len()).sum();
    let headers = IMAGE + 56;
    let binary_table =
        headers + 32 * (module_count + ir_count + native_count) + read_u64(IMAGE + 24);
    let mut candidates = Vec::new();
    let (mut ir_index, mut native_index) = (0, 0);
    for module in &file.modules {
        for ir in &module.ir_modules {
            if module.kdsl.is_some() && !ir.bytes.is_empty() {
                candidates.push((module_count + ir_index, ir.bytes.len()));
            }
            ir_index += 1;
        }
        for native in &module.native_images {
            if module.kdsl.is_some() && !native.bytes.is_empty() {
                candidates.push((module_count + ir_count + native_index, native.bytes.len()));
            }
            native_index += 1;
        }
    }
    if !candidates.is_empty() {
        let (header, length) = candidates[pick(data, 5, candidates.len())];
        let start = binary_table + read_u64(headers + 32 * header + 16);
        let at = start + pick(data, 6, length);
        let mut damaged = bytes.clone();
        damaged[at] ^= 1 << pick(data, 7, 8);
        assert!(
            Syclbin::from_bytes(&damaged).is_err(),
            "a flipped image byte in a SYCLBIN went unnoticed"
        );
    }
}
