//! LLVM plumbing that inkwell does not wrap: target initialization, synchronization scopes
//! on atomics and fences, and instruction flags.

use crate::target::{OutputFormat, TargetDescription};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::llvm_sys;
use inkwell::targets::{
    CodeModel, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
};
use inkwell::values::{
    AsValueRef, BasicValueEnum, InstructionOpcode, InstructionValue, PointerValue,
};
use inkwell::OptimizationLevel;
use std::sync::Once;

static INITIALIZE: Once = Once::new();

extern "C" {
    // LLVM's SPIR-V target, which inkwell does not wrap.
    fn LLVMInitializeSPIRVTargetInfo();
    fn LLVMInitializeSPIRVTarget();
    fn LLVMInitializeSPIRVTargetMC();
    fn LLVMInitializeSPIRVAsmPrinter();
}

/// Initializes kdsl's three LLVM targets (NVPTX, AMDGPU, SPIR-V; no other target is linked
/// into a statically linked build or registered at run time) once per process, and sets the
/// SPIR-V backend's options (read when a SPIR-V target machine is created, so before any is).
pub(crate) fn initialize() {
    INITIALIZE.call_once(|| {
        let config = InitializationConfig::default();
        Target::initialize_nvptx(&config);
        Target::initialize_amd_gpu(&config);
        // SAFETY: LLVM's target registration functions, called once, before any target use.
        unsafe {
            LLVMInitializeSPIRVTargetInfo();
            LLVMInitializeSPIRVTarget();
            LLVMInitializeSPIRVTargetMC();
            LLVMInitializeSPIRVAsmPrinter();
        }
        let _options = command_line_options();
        set_command_line_options();
    });
}

/// LLVM's command-line options are process-wide, and in-process lld resets every one of them
/// to its default on each link. Whoever reads kdsl's options (a SPIR-V backend run) or resets
/// them (a link, which sets them again afterwards with [`set_command_line_options`]) holds
/// this lock.
pub(crate) fn command_line_options() -> std::sync::MutexGuard<'static, ()> {
    static OPTIONS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    OPTIONS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sets kdsl's LLVM options (the SPIR-V backend's extensions, NVPTX's 32-bit local
/// addresses) on options at their defaults.
/// The caller holds [`command_line_options`].
pub(crate) fn set_command_line_options() {
    let arguments: Vec<std::ffi::CString> = std::iter::once("kdsl".to_string())
        .chain(crate::target::spirv::backend_options())
        .chain(crate::target::nvptx::backend_options())
        .map(|argument| std::ffi::CString::new(argument).expect("no NUL in option text"))
        .collect();
    let pointers: Vec<*const std::ffi::c_char> =
        arguments.iter().map(|argument| argument.as_ptr()).collect();
    // SAFETY: the arguments are NUL-terminated strings that outlive the call; LLVM reports
    // unknown options to a null stream instead of exiting.
    unsafe {
        llvm_sys::support::LLVMParseCommandLineOptions(
            pointers.len() as i32,
            pointers.as_ptr(),
            c"".as_ptr(),
        )
    }
}

pub(crate) fn optimization_level(opt_level: u8) -> OptimizationLevel {
    match opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    }
}

/// The pass pipeline for `-O<opt_level>`: LLVM's `default<ON>`, and above `-O0` one more
/// round of common-subexpression elimination and of sinking the code two branches end with.
///
/// LICM hoists the address arithmetic of each arm of an `if`/`else` into the loop preheader
/// after the last GVN has run, as separate copies, so the late SimplifyCFG sees two stores to
/// different (though equal) pointers and keeps them in the arms. EarlyCSE merges the copies;
/// SimplifyCFG then sinks the stores into one after a `phi` of the stored values. For a
/// guarded tile load (`if inside { tile[i] = a[j]; } else { tile[i] = 0.0; }`, the shape of
/// `examples/sgemm.krn`) that is the branch-free predicated load a C ternary gives, and
/// ptxas can then issue all of a tile's global loads before the first shared store.
pub(crate) fn optimization_pipeline(opt_level: u8) -> String {
    let level = opt_level.min(3);
    if level == 0 {
        "default<O0>".to_string()
    } else {
        format!("default<O{level}>,function(early-cse,simplifycfg<sink-common-insts>)")
    }
}

/// A target machine for `target` at `-O<opt_level>`: one kept from an earlier compilation of
/// the process where the target allows it, else a new one.
///
/// AMDGPU machines are kept for reuse ([`MachineLease`]): their register tables (the register
/// alias lists above all) are computed once per machine, milliseconds that a new machine pays
/// again. A machine serves one compilation at a time and keeps nothing of a module that
/// changes the next one's code. NVPTX machines are not reused (they number call sequences in
/// the PTX across modules, so the text would depend on what was compiled before; and they are
/// cheap to make), nor SPIR-V ones (their subtarget keeps a module's types and values).
pub(crate) fn target_machine(
    target: &TargetDescription,
    opt_level: u8,
) -> Result<MachineLease, String> {
    initialize();
    // Levels under the target's floor make the same machine, so they share one key.
    let opt_level = opt_level.max(target.legalization.minimum_backend_opt_level);
    let key = match target.output {
        OutputFormat::AmdgpuCodeObject { .. } => Some(MachineKey {
            triple: target.triple,
            cpu: target.cpu.clone(),
            features: target.cpu_features.clone(),
            opt_level,
        }),
        OutputFormat::PtxAssembly | OutputFormat::SpirvBinary { .. } => None,
    };
    if let Some(key) = &key {
        let mut pool = MACHINE_POOL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = pool.iter().position(|(kept, _)| kept == key) {
            let (key, machine) = pool.swap_remove(index);
            return Ok(MachineLease {
                machine: Some(machine.0),
                key: Some(key),
            });
        }
    }
    Ok(MachineLease {
        machine: Some(new_target_machine(target, opt_level)?),
        key,
    })
}

/// `opt_level` is the back end's level, already raised to the target's floor.
fn new_target_machine(target: &TargetDescription, opt_level: u8) -> Result<TargetMachine, String> {
    let triple = TargetTriple::create(target.triple);
    let llvm_target = Target::from_triple(&triple).map_err(|e| e.to_string_lossy().into_owned())?;
    let reloc = match target.output {
        OutputFormat::AmdgpuCodeObject { .. } => RelocMode::PIC,
        _ => RelocMode::Default,
    };
    // An NVPTX machine takes its data layout from kdsl's options (32-bit local addresses)
    // when it is made, so no link may reset them meanwhile.
    let _options = matches!(target.output, OutputFormat::PtxAssembly).then(command_line_options);
    llvm_target
        .create_target_machine(
            &triple,
            &target.cpu,
            &target.cpu_features,
            optimization_level(opt_level),
            reloc,
            CodeModel::Default,
        )
        .ok_or_else(|| format!("LLVM cannot create a target machine for {}", target.triple))
}

/// What makes two target machines interchangeable.
#[derive(Clone, PartialEq, Eq)]
struct MachineKey {
    triple: &'static str,
    cpu: String,
    features: String,
    opt_level: u8,
}

/// A target machine in the pool, used by one thread at a time.
struct Pooled(TargetMachine);

// SAFETY: an LLVM target machine is not tied to the thread that made it; the pool hands each
// one to a single compilation at a time.
unsafe impl Send for Pooled {}

/// The most machines the pool keeps (several threads may compile for one target at once).
const MACHINE_POOL_CAPACITY: usize = 16;

static MACHINE_POOL: std::sync::Mutex<Vec<(MachineKey, Pooled)>> =
    std::sync::Mutex::new(Vec::new());

/// A target machine for one compilation; a reusable one goes back to the pool afterwards.
pub(crate) struct MachineLease {
    machine: Option<TargetMachine>,
    key: Option<MachineKey>,
}

impl std::ops::Deref for MachineLease {
    type Target = TargetMachine;

    fn deref(&self) -> &TargetMachine {
        self.machine
            .as_ref()
            .expect("a lease holds its machine until dropped")
    }
}

impl Drop for MachineLease {
    fn drop(&mut self) {
        let (Some(key), Some(machine)) = (self.key.take(), self.machine.take()) else {
            return;
        };
        let mut pool = MACHINE_POOL.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < MACHINE_POOL_CAPACITY {
            pool.push((key, Pooled(machine)));
        }
    }
}

/// The id of a synchronization scope name such as `"workgroup"` in `context`.
pub(crate) fn sync_scope_id(context: &Context, scope: &str) -> u32 {
    // SAFETY: the context is live and the name is passed with its length.
    unsafe {
        llvm_sys::core::LLVMGetSyncScopeID(
            context.raw(),
            scope.as_ptr() as *const std::ffi::c_char,
            scope.len(),
        )
    }
}

/// `atomicrmw <op> ptr, value syncscope(scope) monotonic`, for integer and float values.
pub(crate) fn atomic_rmw<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    op: llvm_sys::LLVMAtomicRMWBinOp,
    pointer: PointerValue<'ctx>,
    value: BasicValueEnum<'ctx>,
    scope: &str,
) -> BasicValueEnum<'ctx> {
    let scope = sync_scope_id(context, scope);
    // SAFETY: the builder is positioned (callers only build inside blocks) and the operands
    // belong to the same context; the result is a first-class value.
    unsafe {
        let result = llvm_sys::core::LLVMBuildAtomicRMWSyncScope(
            builder.as_mut_ptr(),
            op,
            pointer.as_value_ref(),
            value.as_value_ref(),
            llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic,
            scope,
        );
        BasicValueEnum::new(result)
    }
}

/// `cmpxchg ptr, expected, desired syncscope(scope) monotonic monotonic`; returns the old value.
pub(crate) fn compare_exchange<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    pointer: PointerValue<'ctx>,
    expected: BasicValueEnum<'ctx>,
    desired: BasicValueEnum<'ctx>,
    scope: &str,
) -> Result<BasicValueEnum<'ctx>, inkwell::builder::BuilderError> {
    let pair = builder.build_cmpxchg(
        pointer,
        expected,
        desired,
        inkwell::AtomicOrdering::Monotonic,
        inkwell::AtomicOrdering::Monotonic,
    )?;
    if let Some(instruction) = pair.as_instruction() {
        set_sync_scope(context, instruction, scope);
    }
    builder.build_extract_value(pair, 0, "old")
}

/// `fence syncscope(scope) <ordering>`.
pub(crate) fn fence<'ctx>(
    context: &'ctx Context,
    builder: &Builder<'ctx>,
    ordering: inkwell::AtomicOrdering,
    scope: &str,
) -> Result<(), inkwell::builder::BuilderError> {
    let instruction = builder.build_fence(ordering, false, "")?;
    set_sync_scope(context, instruction, scope);
    Ok(())
}

fn set_sync_scope(context: &Context, instruction: InstructionValue<'_>, scope: &str) {
    let scope = sync_scope_id(context, scope);
    // SAFETY: the instruction is an atomic (fence, cmpxchg) of this context.
    unsafe { llvm_sys::core::LLVMSetAtomicSyncScopeID(instruction.as_value_ref(), scope) }
}

/// Allows the backend to contract `a * b + c` into an FMA, as nvcc and OpenCL compilers do
/// by default.
pub(crate) fn allow_contraction(value: BasicValueEnum<'_>) {
    // SAFETY: only floating-point instructions (checked first) take fast-math flags.
    unsafe {
        let value = value.as_value_ref();
        if llvm_sys::core::LLVMIsAInstruction(value).is_null()
            || llvm_sys::core::LLVMCanValueUseFastMathFlags(value) == 0
        {
            return;
        }
        llvm_sys::core::LLVMSetFastMathFlags(value, llvm_sys::LLVMFastMathAllowContract);
    }
}

/// Marks an integer `add`, `sub`, `mul` or `shl` as not overflowing as a signed (`nsw`) or
/// an unsigned (`nuw`) operation.
pub(crate) fn set_no_wrap(value: inkwell::values::IntValue<'_>, signed: bool) {
    // SAFETY: only an overflowing binary operator (checked first) takes the flag.
    unsafe {
        let value = value.as_value_ref();
        if !llvm_sys::core::LLVMIsAInstruction(value).is_null()
            && matches!(
                llvm_sys::core::LLVMGetInstructionOpcode(value),
                llvm_sys::LLVMOpcode::LLVMAdd
                    | llvm_sys::LLVMOpcode::LLVMSub
                    | llvm_sys::LLVMOpcode::LLVMMul
                    | llvm_sys::LLVMOpcode::LLVMShl
            )
        {
            if signed {
                llvm_sys::core::LLVMSetNSW(value, 1);
            } else {
                llvm_sys::core::LLVMSetNUW(value, 1);
            }
        }
    }
}

/// Whether an `add`, `sub`, `mul`, `shl` or `trunc` instruction is marked no-unsigned-wrap
/// (`nuw`; for `trunc`: it drops only zero bits).
pub(crate) fn has_no_unsigned_wrap(instruction: InstructionValue<'_>) -> bool {
    // SAFETY: only instructions that can carry the flag (checked first) are asked.
    unsafe {
        takes_wrap_flags(instruction) && llvm_sys::core::LLVMGetNUW(instruction.as_value_ref()) != 0
    }
}

/// Whether an `add`, `sub`, `mul`, `shl` or `trunc` instruction is marked no-signed-wrap
/// (`nsw`; for `trunc`: it drops only copies of the sign bit).
pub(crate) fn has_no_signed_wrap(instruction: InstructionValue<'_>) -> bool {
    // SAFETY: only instructions that can carry the flag (checked first) are asked.
    unsafe {
        takes_wrap_flags(instruction) && llvm_sys::core::LLVMGetNSW(instruction.as_value_ref()) != 0
    }
}

fn takes_wrap_flags(instruction: InstructionValue<'_>) -> bool {
    matches!(
        instruction.get_opcode(),
        InstructionOpcode::Add
            | InstructionOpcode::Sub
            | InstructionOpcode::Mul
            | InstructionOpcode::Shl
            | InstructionOpcode::Trunc
    )
}

/// Whether a `zext` instruction is marked as taking a non-negative operand (`nneg`).
pub(crate) fn has_non_negative(instruction: InstructionValue<'_>) -> bool {
    // SAFETY: only a `zext` (checked first) carries the flag.
    unsafe {
        instruction.get_opcode() == InstructionOpcode::ZExt
            && llvm_sys::core::LLVMGetNNeg(instruction.as_value_ref()) != 0
    }
}

/// Marks a `zext` as taking a non-negative operand.
pub(crate) fn set_non_negative(value: BasicValueEnum<'_>) {
    // SAFETY: only a `zext` instruction (checked first) takes the flag.
    unsafe {
        let value = value.as_value_ref();
        if !llvm_sys::core::LLVMIsAZExtInst(value).is_null() {
            llvm_sys::core::LLVMSetNNeg(value, 1);
        }
    }
}

/// Attaches the loop's unroll request to its back edge as `!llvm.loop` metadata
/// (`llvm.loop.unroll.full`, `llvm.loop.unroll.count`, `llvm.loop.unroll.disable` for a count
/// of 1), which LLVM's loop unroller honours on every target. Nothing is attached for [`kdsl_ir::Unroll::Default`].
pub(crate) fn set_loop_unroll(
    context: &Context,
    back_edge: InstructionValue<'_>,
    unroll: kdsl_ir::Unroll,
) {
    use llvm_sys::core::*;
    use llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
    use llvm_sys::prelude::LLVMMetadataRef;
    let raw = context.raw();
    let string = |text: &str| -> LLVMMetadataRef {
        // SAFETY: the text is passed with its length; the context is live.
        unsafe { LLVMMDStringInContext2(raw, text.as_ptr() as *const std::ffi::c_char, text.len()) }
    };
    // SAFETY: every node and value belongs to `context`; the temporary node is replaced by
    // the loop id (making it refer to itself, as loop ids must), which also deletes it.
    unsafe {
        let hint: Vec<LLVMMetadataRef> = match unroll {
            kdsl_ir::Unroll::Default => return,
            kdsl_ir::Unroll::Full => vec![string("llvm.loop.unroll.full")],
            kdsl_ir::Unroll::Count(1) => vec![string("llvm.loop.unroll.disable")],
            kdsl_ir::Unroll::Count(count) => {
                let int32 = LLVMInt32TypeInContext(raw);
                let count = LLVMConstInt(int32, u64::from(count), 0);
                vec![string("llvm.loop.unroll.count"), LLVMValueAsMetadata(count)]
            }
        };
        let hint = LLVMMDNodeInContext2(raw, hint.as_ptr() as *mut LLVMMetadataRef, hint.len());
        let placeholder = LLVMTemporaryMDNode(raw, std::ptr::null_mut(), 0);
        let mut operands = [placeholder, hint];
        let loop_id = LLVMMDNodeInContext2(raw, operands.as_mut_ptr(), operands.len());
        LLVMMetadataReplaceAllUsesWith(placeholder, loop_id);
        let kind = "llvm.loop";
        let kind = LLVMGetMDKindIDInContext(
            raw,
            kind.as_ptr() as *const std::ffi::c_char,
            kind.len() as u32,
        );
        LLVMSetMetadata(
            back_edge.as_value_ref(),
            kind,
            LLVMMetadataAsValue(raw, loop_id),
        );
    }
}
