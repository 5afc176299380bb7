// Runs LLVM's optimizer and backends where an abort becomes an error: inside an
// llvm::CrashRecoveryContext, with a fatal-error handler that returns to it. Used by
// kdsl-codegen; see kdsl_llvm_contain.cpp beside this file.
#ifndef KDSL_LLVM_CONTAIN_H
#define KDSL_LLVM_CONTAIN_H

#include <llvm-c/Error.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#ifdef __cplusplus
extern "C" {
#endif

// What a contained call ended with.
enum kdsl_contained_outcome {
  // The call returned; its own error (if any) is in its out-parameter.
  KDSL_CONTAINED_RETURNED = 0,
  // LLVM reported a fatal error ("LLVM ERROR: ..."); the reason is in `crash_message`.
  KDSL_CONTAINED_FATAL_ERROR = 1,
  // LLVM crashed with a signal (SIGSEGV, SIGILL, ...); its number is in `crash_message`.
  // SIGABRT (glibc's report of a corrupted heap) is not contained: it ends the process.
  KDSL_CONTAINED_CRASHED = 2,
};

// LLVMTargetMachineEmitToMemoryBuffer, contained. `crash_message` (when set) is freed with
// kdsl_contained_free_message.
int kdsl_contained_emit_to_memory_buffer(LLVMTargetMachineRef machine, LLVMModuleRef module,
                                         LLVMCodeGenFileType file_type,
                                         LLVMBool *failed, char **error_message,
                                         LLVMMemoryBufferRef *buffer,
                                         char **crash_message);

// LLVMRunPasses, contained.
int kdsl_contained_run_passes(LLVMModuleRef module, const char *passes,
                              LLVMTargetMachineRef machine,
                              LLVMPassBuilderOptionsRef options, LLVMErrorRef *error,
                              char **crash_message);

void kdsl_contained_free_message(char *message);

#ifdef __cplusplus
}
#endif

#endif
