// Containment of LLVM aborts (see kdsl_llvm_contain.h).
//
// LLVM's backends end the process on an internal failure: `report_fatal_error` ("LLVM ERROR:
// Cannot select ...") calls the installed fatal-error handler and then exits, and assertion-
// style failures raise SIGABRT or crash outright. clang's in-process cc1 survives these with
// llvm::CrashRecoveryContext, and so does this wrapper: the optimizer or backend runs inside
// one, the fatal-error handler (installed once, process-wide) jumps back to it when the
// failing thread is inside a context, and the context's signal handlers (installed only while
// a contained call runs, and restored after) turn a crash into a return, except SIGABRT
// (see end_after_abort). Only LLVM's own C++ frames lie between the context and the failure;
// no Rust frame is jumped over. Memory the failed call held is leaked, which is the price of
// staying alive.
#include "kdsl_llvm_contain.h"

#include <llvm-c/Core.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/ErrorHandling.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <unistd.h>

namespace {

// The reason of the fatal error that ended this thread's contained call.
thread_local std::string fatal_error_reason;
thread_local bool fatal_error_seen = false;

void fatal_error_handler(void *, const char *reason, bool) {
  if (llvm::CrashRecoveryContext *context = llvm::CrashRecoveryContext::GetCurrent()) {
    fatal_error_seen = true;
    fatal_error_reason = reason != nullptr ? reason : "";
    context->HandleExit(1);
  }
  // Outside a contained call LLVM exits after this returns, as it would without a handler.
  std::fprintf(stderr, "LLVM ERROR: %s\n", reason != nullptr ? reason : "");
}

std::once_flag handler_installed;
std::mutex signal_handlers_mutex;
int contained_calls_running = 0;

// Keeps the recovery context's signal handlers installed while at least one call runs.
class SignalHandlersInstalled {
 public:
  SignalHandlersInstalled() {
    std::lock_guard<std::mutex> lock(signal_handlers_mutex);
    if (contained_calls_running++ == 0) llvm::CrashRecoveryContext::Enable();
  }
  ~SignalHandlersInstalled() {
    std::lock_guard<std::mutex> lock(signal_handlers_mutex);
    if (--contained_calls_running == 0) llvm::CrashRecoveryContext::Disable();
  }
};

char *copy_message(const std::string &message) {
  char *copy = static_cast<char *>(std::malloc(message.size() + 1));
  if (copy != nullptr) std::memcpy(copy, message.c_str(), message.size() + 1);
  return copy;
}

// Error diagnostics of the module's context, which LLVM would otherwise print before calling
// exit(1) (AMDGPU's "unsupported ..." errors, inline-assembly errors): recorded instead, and
// the first one ends the call as a fatal error would.
struct DiagnosticErrors {
  std::string first;
  bool seen = false;
};

void record_diagnostic(LLVMDiagnosticInfoRef info, void *data) {
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError) return;
  auto *errors = static_cast<DiagnosticErrors *>(data);
  if (errors->seen) return;
  char *description = LLVMGetDiagInfoDescription(info);
  errors->first = description != nullptr ? description : "";
  errors->seen = true;
  LLVMDisposeMessage(description);
}

// Installs `record_diagnostic` on a context for the lifetime of the object.
class DiagnosticsRecorded {
 public:
  DiagnosticsRecorded(LLVMContextRef context, DiagnosticErrors *errors)
      : context_(context),
        previous_handler_(LLVMContextGetDiagnosticHandler(context)),
        previous_data_(LLVMContextGetDiagnosticContext(context)) {
    LLVMContextSetDiagnosticHandler(context, record_diagnostic, errors);
  }
  ~DiagnosticsRecorded() {
    LLVMContextSetDiagnosticHandler(context_, previous_handler_, previous_data_);
  }

 private:
  LLVMContextRef context_;
  LLVMDiagnosticHandler previous_handler_;
  void *previous_data_;
};

// SIGABRT inside LLVM (built without assertions) comes from glibc finding its heap corrupted,
// raised while it holds an arena's lock: after a recovery the next allocation in that arena
// waits forever. So the process ends here, with a message written without allocating.
[[noreturn]] void end_after_abort() {
  static const char message[] =
      "kdsl: LLVM aborted while compiling (SIGABRT: glibc found the heap corrupted); the "
      "process cannot go on. Please report the module that was being compiled.\n";
  ssize_t written = write(STDERR_FILENO, message, sizeof message - 1);
  (void)written;
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

template <typename Work>
int run_contained(LLVMModuleRef module, Work work, char **crash_message) {
  std::call_once(handler_installed,
                 [] { llvm::install_fatal_error_handler(fatal_error_handler, nullptr); });
  *crash_message = nullptr;
  fatal_error_seen = false;
  fatal_error_reason.clear();
  SignalHandlersInstalled installed;
  DiagnosticErrors errors;
  DiagnosticsRecorded recorded(LLVMGetModuleContext(module), &errors);
  llvm::CrashRecoveryContext context;
  bool returned = context.RunSafely(work);
  if (errors.seen) {
    *crash_message = copy_message(errors.first);
    return KDSL_CONTAINED_FATAL_ERROR;
  }
  if (returned) return KDSL_CONTAINED_RETURNED;
  if (fatal_error_seen) {
    *crash_message = copy_message(fatal_error_reason);
    return KDSL_CONTAINED_FATAL_ERROR;
  }
  int signal_number = context.RetCode > 128 ? context.RetCode - 128 : context.RetCode;
  if (signal_number == SIGABRT) end_after_abort();
  const char *name = strsignal(signal_number);
  *crash_message = copy_message("signal " + std::to_string(signal_number) +
                                (name != nullptr ? std::string(" (") + name + ")" : ""));
  return KDSL_CONTAINED_CRASHED;
}

}  // namespace

extern "C" int kdsl_contained_emit_to_memory_buffer(
    LLVMTargetMachineRef machine, LLVMModuleRef module, LLVMCodeGenFileType file_type,
    LLVMBool *failed, char **error_message, LLVMMemoryBufferRef *buffer,
    char **crash_message) {
  *failed = 1;
  *error_message = nullptr;
  *buffer = nullptr;
  return run_contained(
      module,
      [&] {
        *failed = LLVMTargetMachineEmitToMemoryBuffer(machine, module, file_type,
                                                      error_message, buffer);
      },
      crash_message);
}

extern "C" int kdsl_contained_run_passes(LLVMModuleRef module, const char *passes,
                                         LLVMTargetMachineRef machine,
                                         LLVMPassBuilderOptionsRef options,
                                         LLVMErrorRef *error, char **crash_message) {
  *error = nullptr;
  return run_contained(module, [&] { *error = LLVMRunPasses(module, passes, machine, options); },
                       crash_message);
}

extern "C" void kdsl_contained_free_message(char *message) { std::free(message); }
