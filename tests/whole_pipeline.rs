//! The whole pipeline from `.krn` source to a launched kernel through the facade, one module per
//! file, in one test binary (each binary links LLVM statically, which is most of its build
//! time). `cargo test --test whole_pipeline syclbin::` runs one file's tests.

#[path = "call_chain.rs"]
mod call_chain;
#[path = "checked.rs"]
mod checked;
#[path = "pipeline.rs"]
mod pipeline;
#[path = "private_arrays.rs"]
mod private_arrays;
#[path = "records.rs"]
mod records;
#[path = "shaped.rs"]
mod shaped;
#[path = "syclbin.rs"]
mod syclbin;
#[path = "work_item_reads.rs"]
mod work_item_reads;

/// `source` compiled for the default targets at `-O<opt_level>` and loaded on `device`.
fn load_at_level(
    device: &kdsl::runtime::Device,
    name: &str,
    source: &str,
    opt_level: u8,
) -> kdsl::runtime::Program {
    let options = kdsl::CompileOptions {
        opt_level,
        ..kdsl::CompileOptions::default()
    };
    let bundle = kdsl::compile(name, source, &kdsl::default_targets(), &options)
        .unwrap_or_else(|error| panic!("{}", error.render(name, source, false)));
    device.load(&bundle).unwrap()
}
