//! Record layouts equal C's on every target: clang compiles `_Static_assert`s on `offsetof`,
//! `sizeof` and `_Alignof` of the same `struct` for each target's triple.

use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};
use kdsl_ir::{RecordType, ScalarType};
use std::io::Write;
use std::process::{Command, Stdio};

/// The C type of a scalar, through clang's predefined macros (no headers needed).
fn c_type(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Bool => "_Bool",
        ScalarType::I8 => "__INT8_TYPE__",
        ScalarType::U8 => "__UINT8_TYPE__",
        ScalarType::I16 => "__INT16_TYPE__",
        ScalarType::U16 => "__UINT16_TYPE__",
        ScalarType::I32 => "__INT32_TYPE__",
        ScalarType::U32 => "__UINT32_TYPE__",
        ScalarType::I64 => "__INT64_TYPE__",
        ScalarType::U64 => "__UINT64_TYPE__",
        ScalarType::F16 => "_Float16",
        // Laid out as any 16-bit scalar (not every clang target has `__bf16`).
        ScalarType::Bf16 => "__UINT16_TYPE__",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

fn records() -> Vec<RecordType> {
    use ScalarType::*;
    let shapes: [&[ScalarType]; 7] = [
        &[I32, I32],
        &[U8, F64, I16, Bool, F32],
        &[F16, U8, U64, I8],
        &[Bool],
        &[F32, F32, F32, U16],
        &[I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, Bool],
        &[U8, Bf16, F32, Bf16],
    ];
    shapes
        .iter()
        .enumerate()
        .map(|(index, fields)| {
            let named: Vec<(String, ScalarType)> = fields
                .iter()
                .enumerate()
                .map(|(i, &ty)| (format!("f{i}"), ty))
                .collect();
            RecordType::new(format!("R{index}"), &named)
        })
        .collect()
}

fn c_source(records: &[RecordType]) -> String {
    let mut source = String::from("#define offsetof(t, f) __builtin_offsetof(t, f)\n");
    for record in records {
        let fields: Vec<String> = record
            .fields
            .iter()
            .map(|f| format!("{} {};", c_type(f.ty), f.name))
            .collect();
        source += &format!("struct {} {{ {} }};\n", record.name, fields.join(" "));
        source += &format!(
            "_Static_assert(sizeof(struct {0}) == {1}, \"size of {0}\");\n_Static_assert(_Alignof(struct {0}) == {2}, \"alignment of {0}\");\n",
            record.name, record.size, record.alignment
        );
        for field in &record.fields {
            source += &format!(
                "_Static_assert(offsetof(struct {0}, {1}) == {2}, \"offset of {0}.{1}\");\n",
                record.name, field.name, field.offset
            );
        }
    }
    source
}

#[test]
fn record_layouts_equal_c_on_every_target() {
    let source = c_source(&records());
    let clang = crate::common::tool(&["clang-22"]);
    for triple in [
        "x86_64-unknown-linux-gnu",
        "nvptx64-nvidia-cuda",
        "amdgcn-amd-amdhsa",
        "spirv64-unknown-unknown",
    ] {
        let mut child = Command::new(&clang)
            .args([
                "-fsyntax-only",
                "-std=c11",
                "-x",
                "c",
                "-target",
                triple,
                "-",
            ])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("running {}: {e}", clang.display()));
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(source.as_bytes())
            .expect("clang reads its input");
        let output = child.wait_with_output().expect("clang finishes");
        assert!(
            output.status.success(),
            "the C layout differs on {triple}:\n{}\n{source}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The lowering addresses a field at its byte offset on every target.
#[test]
fn field_accesses_use_the_record_offsets() {
    let source = "struct P { tag: u8, mass: f64, charge: i16 }\n\
        kernel k(p: global [P], out: global mut [f64]) {\n\
            let i = get_global_id(0);\n\
            out[i] = p[i].mass + (p[i].charge as f64);\n\
        }\n";
    let module = kdsl_frontend::compile_to_ir(source).expect("compiles");
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ];
    for target in &targets {
        let ir = emit_llvm_ir(&module, target, &Options::default())
            .unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(
            ir.contains("[24 x i8]") || ir.contains(", 24"),
            "{target}: records are not 24 bytes apart:\n{ir}"
        );
        assert!(
            ir.contains("i64 8") && ir.contains("i64 16"),
            "{target}: the field offsets 8 and 16 are missing:\n{ir}"
        );
    }
}
